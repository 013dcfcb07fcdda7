//! The typed AST of an AmberScript compute script. `Display` prints valid AmberScript, so a
//! parsed script can be printed, diffed and parsed again.

use super::format::ImageFormat;
use std::fmt;

/// A scalar component type of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

/// (name, scalar, size in bytes) — the Amber type names.
pub const SCALARS: &[(&str, Scalar, u32)] = &[
    ("int8", Scalar::I8, 1),
    ("int16", Scalar::I16, 2),
    ("int32", Scalar::I32, 4),
    ("int64", Scalar::I64, 8),
    ("uint8", Scalar::U8, 1),
    ("uint16", Scalar::U16, 2),
    ("uint32", Scalar::U32, 4),
    ("uint64", Scalar::U64, 8),
    ("float16", Scalar::F16, 2),
    ("float", Scalar::F32, 4),
    ("double", Scalar::F64, 8),
];

impl Scalar {
    pub fn from_name(name: &str) -> Option<Scalar> {
        SCALARS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, s, _)| *s)
    }

    pub fn name(self) -> &'static str {
        SCALARS
            .iter()
            .find(|(_, s, _)| *s == self)
            .map(|(n, _, _)| *n)
            .unwrap_or("?")
    }

    pub fn size(self) -> u32 {
        SCALARS
            .iter()
            .find(|(_, s, _)| *s == self)
            .map(|(_, _, z)| *z)
            .unwrap_or(0)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `int32`, `vec3<float>`, `mat2x4<double>`, each optionally followed by `[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataType {
    pub scalar: Scalar,
    /// Components per column (vector size); 1 for a scalar.
    pub rows: u32,
    /// Columns; 1 unless a matrix.
    pub cols: u32,
    pub array: bool,
}

impl DataType {
    pub fn scalar(s: Scalar) -> DataType {
        DataType {
            scalar: s,
            rows: 1,
            cols: 1,
            array: false,
        }
    }

    pub fn is_matrix(&self) -> bool {
        self.cols > 1
    }

    /// Values one element takes from a DATA list.
    pub fn components(&self) -> u32 {
        self.rows * self.cols
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.cols > 1 {
            write!(f, "mat{}x{}<{}>", self.cols, self.rows, self.scalar)?;
        } else if self.rows > 1 {
            write!(f, "vec{}<{}>", self.rows, self.scalar)?;
        } else {
            write!(f, "{}", self.scalar)?;
        }
        if self.array {
            f.write_str("[]")?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    Std140,
    Std430,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Layout::Std140 => "STD140",
            Layout::Std430 => "STD430",
        })
    }
}

/// A literal as written: integers stay exact (they wrap to the element type when stored).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
}

impl Value {
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
        }
    }

    /// The value's low 64 bits as an integer (floats are truncated toward zero first).
    pub fn as_bits(self) -> u64 {
        match self {
            Value::Int(v) => v as u64,
            Value::Float(v) => (v as i64) as u64,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) if v.is_nan() => f.write_str("nan"),
            Value::Float(v) if v.is_infinite() => {
                f.write_str(if *v > 0.0 { "inf" } else { "-inf" })
            }
            // `{:?}` keeps a decimal point (so it reads back as a float) and round-trips.
            Value::Float(v) => write!(f, "{v:?}"),
        }
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderFormat {
    Glsl,
    SpirvAsm,
    SpirvHex,
}

impl fmt::Display for ShaderFormat {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            ShaderFormat::Glsl => "GLSL",
            ShaderFormat::SpirvAsm => "SPIRV-ASM",
            ShaderFormat::SpirvHex => "SPIRV-HEX",
        })
    }
}

/// A SPIR-V target environment: the SPIR-V version and the Vulkan version of the tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetEnv {
    /// SPIR-V minor version (1.x).
    pub spv_minor: u32,
    /// Vulkan minor version (1.x) passed to glslang.
    pub vk_minor: u32,
}

impl TargetEnv {
    /// Amber's default when no TARGET_ENV is given.
    pub const DEFAULT: TargetEnv = TargetEnv {
        spv_minor: 0,
        vk_minor: 0,
    };

    /// Accepts `spv1.X` (mapped to the lowest Vulkan that carries it) and `vulkan1.X`.
    pub fn parse(s: &str) -> Option<TargetEnv> {
        if let Some(m) = s.strip_prefix("spv1.") {
            let spv_minor: u32 = m.parse().ok()?;
            let vk_minor = match spv_minor {
                0 => 0,
                1..=3 => 1,
                4 | 5 => 2,
                6 => 3,
                _ => return None,
            };
            return Some(TargetEnv {
                spv_minor,
                vk_minor,
            });
        }
        if let Some(m) = s.strip_prefix("vulkan1.") {
            let vk_minor: u32 = m.parse().ok()?;
            let spv_minor = match vk_minor {
                0 => 0,
                1 => 3,
                2 => 5,
                3 => 6,
                _ => return None,
            };
            return Some(TargetEnv {
                spv_minor,
                vk_minor,
            });
        }
        None
    }
}

impl fmt::Display for TargetEnv {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "spv1.{}", self.spv_minor)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Shader {
    pub name: String,
    pub format: ShaderFormat,
    /// Set only when the script names one.
    pub target_env: Option<TargetEnv>,
    pub source: String,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BufferInit {
    Fill { size: u64, value: Value },
    Series { size: u64, from: Value, inc: Value },
    Data(Vec<Value>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageDim {
    D1,
    D2,
    D3,
}

impl fmt::Display for ImageDim {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            ImageDim::D1 => "DIM_1D",
            ImageDim::D2 => "DIM_2D",
            ImageDim::D3 => "DIM_3D",
        })
    }
}

/// The shape of an `IMAGE`. The buffer's data is level 0, texel by texel, rows of `width`,
/// `height` rows per slice, `depth` slices (1-D: height and depth 1; 2-D: depth 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageDesc {
    pub dim: ImageDim,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub mip_levels: u32,
}

impl ImageDesc {
    pub fn texels(&self) -> u64 {
        self.width as u64 * self.height as u64 * self.depth as u64
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    pub name: String,
    /// The component type of the data (for a format: its equivalent, see `format`).
    pub ty: DataType,
    pub layout: Layout,
    pub init: BufferInit,
    /// Set when the buffer has an image format (`FORMAT f`, `DATA_TYPE f`, or an `IMAGE`).
    pub format: Option<ImageFormat>,
    /// Set for `IMAGE`s.
    pub image: Option<ImageDesc>,
    pub line: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Nearest,
    Linear,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressMode {
    Repeat,
    MirroredRepeat,
    ClampToEdge,
    ClampToBorder,
    MirroredClampToEdge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BorderColor {
    FloatTransparentBlack,
    IntTransparentBlack,
    FloatOpaqueBlack,
    IntOpaqueBlack,
    FloatOpaqueWhite,
    IntOpaqueWhite,
}

pub const FILTERS: &[(&str, Filter)] = &[("nearest", Filter::Nearest), ("linear", Filter::Linear)];

pub const ADDRESS_MODES: &[(&str, AddressMode)] = &[
    ("repeat", AddressMode::Repeat),
    ("mirrored_repeat", AddressMode::MirroredRepeat),
    ("clamp_to_edge", AddressMode::ClampToEdge),
    ("clamp_to_border", AddressMode::ClampToBorder),
    ("mirrored_clamp_to_edge", AddressMode::MirroredClampToEdge),
];

pub const BORDER_COLORS: &[(&str, BorderColor)] = &[
    (
        "float_transparent_black",
        BorderColor::FloatTransparentBlack,
    ),
    ("int_transparent_black", BorderColor::IntTransparentBlack),
    ("float_opaque_black", BorderColor::FloatOpaqueBlack),
    ("int_opaque_black", BorderColor::IntOpaqueBlack),
    ("float_opaque_white", BorderColor::FloatOpaqueWhite),
    ("int_opaque_white", BorderColor::IntOpaqueWhite),
];

fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], v: T) -> &'static str {
    table
        .iter()
        .find(|(_, x)| *x == v)
        .map(|(n, _)| *n)
        .unwrap_or("?")
}

/// A `SAMPLER`, with Amber's defaults (nearest filters, repeat, float transparent black
/// border, LOD range 0..1, normalized coordinates). `UNNORMALIZED_COORDS` also sets the LOD
/// range to 0..0, as Amber does.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampler {
    pub name: String,
    pub mag_filter: Filter,
    pub min_filter: Filter,
    pub address: [AddressMode; 3],
    pub border: BorderColor,
    pub min_lod: f64,
    pub max_lod: f64,
    pub normalized: bool,
    pub line: usize,
}

impl Sampler {
    pub fn new(name: String, line: usize) -> Sampler {
        Sampler {
            name,
            mag_filter: Filter::Nearest,
            min_filter: Filter::Nearest,
            address: [AddressMode::Repeat; 3],
            border: BorderColor::FloatTransparentBlack,
            min_lod: 0.0,
            max_lod: 1.0,
            normalized: true,
            line,
        }
    }
}

impl fmt::Display for Sampler {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "SAMPLER {} MAG_FILTER {} MIN_FILTER {}",
            self.name,
            name_of(FILTERS, self.mag_filter),
            name_of(FILTERS, self.min_filter)
        )?;
        for (axis, m) in ["U", "V", "W"].iter().zip(self.address) {
            write!(f, " ADDRESS_MODE_{axis} {}", name_of(ADDRESS_MODES, m))?;
        }
        write!(f, " BORDER_COLOR {}", name_of(BORDER_COLORS, self.border))?;
        if self.normalized {
            write!(
                f,
                " MIN_LOD {:?} MAX_LOD {:?} NORMALIZED_COORDS",
                self.min_lod, self.max_lod
            )
        } else {
            f.write_str(" UNNORMALIZED_COORDS")
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecType {
    U32,
    I32,
    F32,
}

impl fmt::Display for SpecType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            SpecType::U32 => "uint32",
            SpecType::I32 => "int32",
            SpecType::F32 => "float",
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Specialization {
    pub id: u32,
    pub ty: SpecType,
    pub value: Value,
}

impl Specialization {
    /// The 32 bits handed to Vulkan.
    pub fn bits(&self) -> u32 {
        match self.ty {
            SpecType::U32 | SpecType::I32 => self.value.as_bits() as u32,
            SpecType::F32 => (self.value.as_f64() as f32).to_bits(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attach {
    pub shader: String,
    pub entry_point: String,
    pub specializations: Vec<Specialization>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptorKind {
    Storage,
    Uniform,
    StorageDynamic,
    UniformDynamic,
    StorageImage,
    SampledImage,
    CombinedImageSampler,
    UniformTexelBuffer,
    StorageTexelBuffer,
    /// `BIND SAMPLER` / `SAMPLER_ARRAY`: the bind's names are samplers.
    Sampler,
}

impl DescriptorKind {
    pub fn is_dynamic(self) -> bool {
        matches!(
            self,
            DescriptorKind::StorageDynamic | DescriptorKind::UniformDynamic
        )
    }

    /// Kinds whose buffers must be `IMAGE`s.
    pub fn is_image(self) -> bool {
        matches!(
            self,
            DescriptorKind::StorageImage
                | DescriptorKind::SampledImage
                | DescriptorKind::CombinedImageSampler
        )
    }

    /// Kinds whose buffers are read through a buffer view in the buffer's format.
    pub fn is_texel_buffer(self) -> bool {
        matches!(
            self,
            DescriptorKind::UniformTexelBuffer | DescriptorKind::StorageTexelBuffer
        )
    }
}

impl fmt::Display for DescriptorKind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            DescriptorKind::Storage => "storage",
            DescriptorKind::Uniform => "uniform",
            DescriptorKind::StorageDynamic => "storage_dynamic",
            DescriptorKind::UniformDynamic => "uniform_dynamic",
            DescriptorKind::StorageImage => "storage_image",
            DescriptorKind::SampledImage => "sampled_image",
            DescriptorKind::CombinedImageSampler => "combined_image_sampler",
            DescriptorKind::UniformTexelBuffer => "uniform_texel_buffer",
            DescriptorKind::StorageTexelBuffer => "storage_texel_buffer",
            DescriptorKind::Sampler => "sampler",
        })
    }
}

/// One `BIND BUFFER` / `BIND BUFFER_ARRAY` of a descriptor.
#[derive(Clone, Debug, PartialEq)]
pub struct DescriptorBind {
    /// One name for `BIND BUFFER`, one or more for `BIND BUFFER_ARRAY`.
    pub buffers: Vec<String>,
    pub array: bool,
    pub kind: DescriptorKind,
    pub set: u32,
    pub binding: u32,
    /// Dynamic offsets, one per buffer (dynamic kinds only).
    pub dynamic_offsets: Vec<u32>,
    /// Descriptor offsets, one per buffer (default 0).
    pub descriptor_offsets: Vec<u64>,
    /// Descriptor ranges, one per buffer; `None` is VK_WHOLE_SIZE (Amber's -1).
    pub descriptor_ranges: Vec<Option<u64>>,
    /// The sampler of a `combined_image_sampler` (one for every image of the bind).
    pub sampler: Option<String>,
    /// `BASE_MIP_LEVEL` of an image bind: the first level its view shows.
    pub base_mip_level: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RequiredSize {
    Size(u32),
    Min,
    Max,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct SubgroupControl {
    pub shader: String,
    pub fully_populated: Option<bool>,
    pub varying_size: Option<bool>,
    pub required_size: Option<RequiredSize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    pub name: String,
    pub attach: Attach,
    pub binds: Vec<DescriptorBind>,
    pub push_constant: Option<String>,
    pub subgroup: Option<SubgroupControl>,
    pub line: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparator {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Comparator {
    pub const ALL: [(&'static str, Comparator); 6] = [
        ("EQ", Comparator::Eq),
        ("NE", Comparator::Ne),
        ("LT", Comparator::Lt),
        ("LE", Comparator::Le),
        ("GT", Comparator::Gt),
        ("GE", Comparator::Ge),
    ];
}

impl fmt::Display for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let name = Comparator::ALL
            .iter()
            .find(|(_, c)| c == self)
            .map(|(n, _)| *n)
            .unwrap_or("?");
        f.write_str(name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub value: f64,
    pub percent: bool,
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}{}", self.value, if self.percent { "%" } else { "" })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Values {
        buffer: String,
        offset: u64,
        tolerances: Vec<Tolerance>,
        cmp: Comparator,
        values: Vec<Value>,
    },
    EqBuffer {
        a: String,
        b: String,
    },
    Rmse {
        a: String,
        b: String,
        tolerance: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    DeviceFeature(String),
    DeviceProperty(String),
    DeviceExtension(String),
    InstanceExtension(String),
    FenceTimeout(u32),
    Shader(Shader),
    Buffer(Buffer),
    Sampler(Sampler),
    Pipeline(Pipeline),
    Run {
        pipeline: String,
        groups: [u32; 3],
        timed: bool,
    },
    Copy {
        from: String,
        to: String,
    },
    Repeat {
        count: u32,
        body: Vec<Stmt>,
    },
    Expect(Expect),
}

/// A command with the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub line: usize,
    pub cmd: Command,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Script {
    pub stmts: Vec<Stmt>,
    /// Text of `# ferrite-only: ...` header comments.
    pub ferrite_only: Option<String>,
}

/// One accessor per kind of named statement: the names it gives, in script order.
macro_rules! named_statements {
    ($($accessor:ident: $variant:ident),* $(,)?) => {$(
        pub fn $accessor(&self) -> impl Iterator<Item = &str> {
            self.stmts.iter().filter_map(|s| match &s.cmd {
                Command::$variant(n) => Some(n.as_str()),
                _ => None,
            })
        }
    )*};
}

impl Script {
    named_statements! {
        features: DeviceFeature,
        properties: DeviceProperty,
        device_extensions: DeviceExtension,
        instance_extensions: InstanceExtension,
    }
}

impl fmt::Display for BufferInit {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            BufferInit::Fill { size, value } => write!(f, "SIZE {size} FILL {value}"),
            BufferInit::Series { size, from, inc } => {
                write!(f, "SIZE {size} SERIES_FROM {from} INC_BY {inc}")
            }
            BufferInit::Data(v) => write!(f, "DATA\n{}\nEND", join(v)),
        }
    }
}

impl fmt::Display for DescriptorBind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.kind == DescriptorKind::Sampler {
            let what = if self.array {
                "SAMPLER_ARRAY"
            } else {
                "SAMPLER"
            };
            return write!(
                f,
                "BIND {what} {} DESCRIPTOR_SET {} BINDING {}",
                self.buffers.join(" "),
                self.set,
                self.binding
            );
        }
        let what = if self.array { "BUFFER_ARRAY" } else { "BUFFER" };
        write!(
            f,
            "BIND {what} {} AS {}{} DESCRIPTOR_SET {} BINDING {}",
            self.buffers.join(" "),
            self.kind,
            self.sampler
                .as_ref()
                .map(|s| format!(" SAMPLER {s}"))
                .unwrap_or_default(),
            self.set,
            self.binding
        )?;
        if self.base_mip_level != 0 {
            write!(f, " BASE_MIP_LEVEL {}", self.base_mip_level)?;
        }
        if !self.dynamic_offsets.is_empty() {
            write!(f, " OFFSET {}", join(&self.dynamic_offsets))?;
        }
        if self.descriptor_offsets.iter().any(|&o| o != 0) {
            write!(f, " DESCRIPTOR_OFFSET {}", join(&self.descriptor_offsets))?;
        }
        if self.descriptor_ranges.iter().any(|r| r.is_some()) {
            let r: Vec<String> = self
                .descriptor_ranges
                .iter()
                .map(|r| r.map_or("-1".into(), |v| v.to_string()))
                .collect();
            write!(f, " DESCRIPTOR_RANGE {}", r.join(" "))?;
        }
        Ok(())
    }
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "PIPELINE compute {}", self.name)?;
        write!(f, "  ATTACH {}", self.attach.shader)?;
        if self.attach.entry_point != "main" {
            write!(f, " ENTRY_POINT {}", self.attach.entry_point)?;
        }
        for s in &self.attach.specializations {
            write!(f, " SPECIALIZE {} AS {} {}", s.id, s.ty, s.value)?;
        }
        writeln!(f)?;
        for b in &self.binds {
            writeln!(f, "  {b}")?;
        }
        if let Some(p) = &self.push_constant {
            writeln!(f, "  BIND BUFFER {p} AS push_constant")?;
        }
        if let Some(s) = &self.subgroup {
            writeln!(f, "  SUBGROUP {}", s.shader)?;
            let onoff = |b: bool| if b { "on" } else { "off" };
            if let Some(b) = s.fully_populated {
                writeln!(f, "    FULLY_POPULATED {}", onoff(b))?;
            }
            if let Some(b) = s.varying_size {
                writeln!(f, "    VARYING_SIZE {}", onoff(b))?;
            }
            match &s.required_size {
                Some(RequiredSize::Size(n)) => writeln!(f, "    REQUIRED_SIZE {n}")?,
                Some(RequiredSize::Min) => writeln!(f, "    REQUIRED_SIZE MIN")?,
                Some(RequiredSize::Max) => writeln!(f, "    REQUIRED_SIZE MAX")?,
                None => {}
            }
            writeln!(f, "  END")?;
        }
        write!(f, "END")
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Expect::Values {
                buffer,
                offset,
                tolerances,
                cmp,
                values,
            } => {
                write!(f, "EXPECT {buffer} IDX {offset}")?;
                if !tolerances.is_empty() {
                    write!(f, " TOLERANCE {}", join(tolerances))?;
                }
                write!(f, " {cmp} {}", join(values))
            }
            Expect::EqBuffer { a, b } => write!(f, "EXPECT {a} EQ_BUFFER {b}"),
            Expect::Rmse { a, b, tolerance } => {
                write!(f, "EXPECT {a} RMSE_BUFFER {b} TOLERANCE {tolerance:?}")
            }
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Command::DeviceFeature(n) => write!(f, "DEVICE_FEATURE {n}"),
            Command::DeviceProperty(n) => write!(f, "DEVICE_PROPERTY {n}"),
            Command::DeviceExtension(n) => write!(f, "DEVICE_EXTENSION {n}"),
            Command::InstanceExtension(n) => write!(f, "INSTANCE_EXTENSION {n}"),
            Command::FenceTimeout(ms) => write!(f, "SET ENGINE_DATA fence_timeout_ms {ms}"),
            Command::Shader(s) => {
                write!(f, "SHADER compute {} {}", s.name, s.format)?;
                if let Some(t) = s.target_env {
                    write!(f, " TARGET_ENV {t}")?;
                }
                write!(f, "\n{}END", s.source)
            }
            Command::Buffer(b) => match (&b.image, &b.format) {
                (Some(img), Some(fmt)) => {
                    write!(f, "IMAGE {} FORMAT {}", b.name, fmt.name)?;
                    if img.mip_levels != 1 {
                        write!(f, " MIP_LEVELS {}", img.mip_levels)?;
                    }
                    write!(f, " {} WIDTH {}", img.dim, img.width)?;
                    if img.dim != ImageDim::D1 {
                        write!(f, " HEIGHT {}", img.height)?;
                    }
                    if img.dim == ImageDim::D3 {
                        write!(f, " DEPTH {}", img.depth)?;
                    }
                    match &b.init {
                        BufferInit::Fill { value, .. } => write!(f, " FILL {value}"),
                        BufferInit::Series { from, inc, .. } => {
                            write!(f, " SERIES_FROM {from} INC_BY {inc}")
                        }
                        BufferInit::Data(v) => write!(f, " DATA\n{}\nEND", join(v)),
                    }
                }
                (_, Some(fmt)) => write!(f, "BUFFER {} DATA_TYPE {} {}", b.name, fmt.name, b.init),
                _ => write!(
                    f,
                    "BUFFER {} DATA_TYPE {} {} {}",
                    b.name, b.ty, b.layout, b.init
                ),
            },
            Command::Sampler(s) => write!(f, "{s}"),
            Command::Pipeline(p) => write!(f, "{p}"),
            Command::Run {
                pipeline,
                groups,
                timed,
            } => {
                let t = if *timed { "TIMED_EXECUTION " } else { "" };
                write!(
                    f,
                    "RUN {t}{pipeline} {} {} {}",
                    groups[0], groups[1], groups[2]
                )
            }
            Command::Copy { from, to } => write!(f, "COPY {from} TO {to}"),
            Command::Repeat { count, body } => {
                writeln!(f, "REPEAT {count}")?;
                for s in body {
                    writeln!(f, "  {}", s.cmd)?;
                }
                write!(f, "END")
            }
            Command::Expect(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Display for Script {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "#!amber")?;
        if let Some(r) = &self.ferrite_only {
            writeln!(f, "# ferrite-only: {r}")?;
        }
        for s in &self.stmts {
            writeln!(f, "{}", s.cmd)?;
        }
        Ok(())
    }
}
