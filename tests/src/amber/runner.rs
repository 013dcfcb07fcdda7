//! Runs parsed scripts: declarations first (buffers, shaders, pipelines, with every
//! requirement checked so an unsupported file is skipped before anything runs), then the
//! commands in order.

use super::ast::*;
use super::layout::{self, ElementFormat, Loaded};
use super::parser::{self, ParseError};
use super::shader::{self, Compiler};
use super::vk::{
    self as gpu, BindingDesc, Gpu, ImageSpec, Opened, PipelineDesc, Requirements, Resource,
};
use super::AmberError;
use ash::vk;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Fence timeout when a script sets none. Amber's own default is shorter; simulated
/// devices are slow, so the runner allows more.
pub const DEFAULT_FENCE_TIMEOUT_MS: u32 = 10_000;

/// The fence timeout for scripts that set none: `$FERRITE_AMBER_FENCE_TIMEOUT_MS` (for slow
/// simulated devices), else [`DEFAULT_FENCE_TIMEOUT_MS`]. `SET ENGINE_DATA fence_timeout_ms`
/// in a script wins over both.
pub fn default_fence_timeout_ms() -> u32 {
    std::env::var("FERRITE_AMBER_FENCE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_FENCE_TIMEOUT_MS)
}

/// Amber's epsilon for float EQ/NE without TOLERANCE: a relative 1e-6 percent.
const EPSILON_PERCENT: f64 = 0.000001;

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Outcome::Pass => f.write_str("PASS"),
            Outcome::Fail(r) => write!(f, "FAIL: {r}"),
            Outcome::Skip(r) => write!(f, "SKIP: {r}"),
        }
    }
}

/// Where time went, summed over files.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub total: Duration,
    pub parse: Duration,
    /// glslangValidator / spirv-as time (cache misses only).
    pub compile: Duration,
    /// vkCreateShaderModule + vkCreateComputePipelines.
    pub pipeline: Duration,
    /// Instance + device creation.
    pub device: Duration,
    /// Submit to fence signalled, with uploads and readbacks.
    pub dispatch: Duration,
}

impl Timing {
    fn add(&mut self, o: &Timing) {
        self.total += o.total;
        self.parse += o.parse;
        self.compile += o.compile;
        self.pipeline += o.pipeline;
        self.device += o.device;
        self.dispatch += o.dispatch;
    }
}

#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub timing: Timing,
    pub cache_hits: u32,
    pub cache_misses: u32,
}

impl Summary {
    /// Counts one file's outcome.
    pub fn count(&mut self, o: &Outcome) {
        match o {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail(_) => self.failed += 1,
            Outcome::Skip(_) => self.skipped += 1,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

pub struct Runner {
    entry: ash::Entry,
    pub compiler: Compiler,
    pub summary: Summary,
    /// The last device, with the requirements it was made for.
    cached: Option<(String, Box<Gpu>)>,
}

struct BufState {
    ty: DataType,
    fmt: ElementFormat,
    bytes: Vec<u8>,
    gpu: GpuObject,
    format: Option<super::format::ImageFormat>,
}

/// What backs a script buffer on the device.
#[derive(Clone, Copy)]
enum GpuObject {
    Buffer(usize),
    Image(usize),
    /// An image no pipeline binds (used only by COPY and EXPECT): host bytes only.
    HostOnly,
}

struct PipeState {
    id: usize,
    /// The buffers the pipeline binds, with the first mip level of images.
    buffers: Vec<(String, u32)>,
    push: Option<String>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Runner {
    pub fn new(compiler: Compiler) -> Result<Runner, AmberError> {
        Ok(Runner {
            entry: gpu::load_entry()?,
            compiler,
            summary: Summary::default(),
            cached: None,
        })
    }

    /// The header line's device description.
    pub fn device_description(&self) -> Result<String, AmberError> {
        gpu::describe_first_device(&self.entry)
    }

    pub fn run_file(&mut self, path: &Path) -> Outcome {
        let src = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                return self.count(
                    Outcome::Fail(format!("cannot read: {e}")),
                    Timing::default(),
                )
            }
        };
        self.run_source(&path.display().to_string(), &src)
    }

    pub fn run_source(&mut self, name: &str, src: &str) -> Outcome {
        let start = Instant::now();
        let mut t = Timing::default();
        let outcome = match parser::parse(name, src) {
            Err(ParseError::Unsupported { line, what, .. }) => {
                Outcome::Skip(format!("line {line}: unsupported: {what}"))
            }
            Err(e) => Outcome::Fail(e.to_string()),
            Ok(script) => {
                t.parse = start.elapsed();
                match self.execute(&script, &mut t) {
                    Ok(o) => o,
                    Err(e) => Outcome::Fail(e.to_string()),
                }
            }
        };
        t.total = start.elapsed();
        self.count(outcome, t)
    }

    fn count(&mut self, o: Outcome, t: Timing) -> Outcome {
        self.summary.count(&o);
        self.summary.timing.add(&t);
        // All tool time, including shaders compiled ahead by `Compiler::precompile`.
        self.summary.timing.compile = self.compiler.tool_time;
        self.summary.cache_hits = self.compiler.hits;
        self.summary.cache_misses = self.compiler.misses;
        o
    }

    fn execute(&mut self, script: &Script, t: &mut Timing) -> Result<Outcome, AmberError> {
        let skip = |reason: String| -> Outcome {
            match &script.ferrite_only {
                Some(r) => Outcome::Skip(format!("{reason} (ferrite-only: {r})")),
                None => Outcome::Skip(reason),
            }
        };
        // Shaders first: a shader that does not compile is a failure on any device.
        let tool_before = self.compiler.tool_time;
        let mut spirv: HashMap<&str, Vec<u32>> = HashMap::new();
        for s in &script.stmts {
            if let Command::Shader(sh) = &s.cmd {
                let words = self.compiler.compile(sh);
                t.compile = self.compiler.tool_time - tool_before;
                spirv.insert(&sh.name, words?);
            }
        }
        let req = Requirements {
            features: script.features().map(String::from).collect(),
            properties: script.properties().map(String::from).collect(),
            device_extensions: script.device_extensions().map(String::from).collect(),
            instance_extensions: script.instance_extensions().map(String::from).collect(),
        };
        // A device made for the same requirements is reused (its objects were destroyed).
        let key = format!("{req:?}");
        let mut g = match self.cached.take() {
            Some((k, g)) if k == key => g,
            _ => {
                let dev_start = Instant::now();
                let opened = Gpu::open(self.entry.clone(), &req)?;
                t.device = dev_start.elapsed();
                match opened {
                    Opened::Ready(g) => g,
                    Opened::Skip(r) => return Ok(skip(r)),
                }
            }
        };
        let mut timeout = default_fence_timeout_ms();
        let mut bufs: HashMap<&str, BufState> = HashMap::new();
        let mut pipes: HashMap<&str, PipeState> = HashMap::new();
        let mut samplers: HashMap<&str, usize> = HashMap::new();
        // The usages each image's binds need (an image is made once, for all of them).
        let mut usage: HashMap<&str, vk::ImageUsageFlags> = HashMap::new();
        for s in &script.stmts {
            if let Command::Pipeline(p) = &s.cmd {
                for b in &p.binds {
                    let u = match b.kind {
                        DescriptorKind::StorageImage => vk::ImageUsageFlags::STORAGE,
                        DescriptorKind::SampledImage | DescriptorKind::CombinedImageSampler => {
                            vk::ImageUsageFlags::SAMPLED
                        }
                        _ => continue,
                    };
                    for n in &b.buffers {
                        *usage.entry(n.as_str()).or_default() |= u;
                    }
                }
            }
        }
        for s in &script.stmts {
            match &s.cmd {
                Command::FenceTimeout(ms) => timeout = *ms,
                Command::Sampler(smp) => {
                    samplers.insert(&smp.name, g.create_sampler(smp)?);
                }
                Command::Buffer(b) => {
                    let mut bytes = layout::initial_bytes(&b.ty, b.layout, &b.init);
                    let fmt = ElementFormat::new(&b.ty, b.layout);
                    let id = match (&b.image, b.format) {
                        (Some(img), Some(f)) => {
                            bytes.resize((img.texels() * fmt.size as u64) as usize, 0);
                            match usage.get(b.name.as_str()) {
                                None => GpuObject::HostOnly,
                                Some(&u) => {
                                    let spec = ImageSpec {
                                        format: f.vk,
                                        dim: img.dim,
                                        extent: [img.width, img.height, img.depth],
                                        levels: img.mip_levels,
                                        texel_size: f.texel_size(),
                                        usage: u,
                                    };
                                    match g.create_image(&spec)? {
                                        Ok(id) => GpuObject::Image(id),
                                        Err(reason) => {
                                            return Ok(skip(format!("IMAGE {}: {reason}", b.name)))
                                        }
                                    }
                                }
                            }
                        }
                        _ => GpuObject::Buffer(g.create_buffer(bytes.len())?),
                    };
                    bufs.insert(
                        &b.name,
                        BufState {
                            ty: b.ty,
                            fmt,
                            bytes,
                            gpu: id,
                            format: b.format,
                        },
                    );
                }
                Command::Pipeline(p) => {
                    let words = &spirv[p.attach.shader.as_str()];
                    match self.make_pipeline(&mut g, p, words, &bufs, &samplers)? {
                        Ok(ps) => {
                            pipes.insert(&p.name, ps);
                        }
                        Err(reason) => return Ok(skip(reason)),
                    }
                }
                _ => {}
            }
        }
        t.pipeline = g.pipeline_time;
        let r = run_cmds(&mut g, &script.stmts, &mut bufs, &pipes, timeout, t);
        if g.reset() {
            self.cached = Some((key, g));
        }
        r
    }

    /// Builds a pipeline, or `Ok(Err(reason))` when the device's limits are too small.
    fn make_pipeline(
        &self,
        g: &mut Gpu,
        p: &Pipeline,
        words: &[u32],
        bufs: &HashMap<&str, BufState>,
        samplers: &HashMap<&str, usize>,
    ) -> Result<Result<PipeState, String>, AmberError> {
        let lim = g.limits;
        let push_size = p.push_constant.as_ref().map_or(0, |n| {
            (bufs[n.as_str()].bytes.len() as u32).next_multiple_of(4)
        });
        if push_size > lim.max_push_constants_size {
            return Ok(Err(format!("pipeline {} pushes {push_size} bytes of constants, device allows {} (maxPushConstantsSize)", p.name, lim.max_push_constants_size)));
        }
        let shared = shader::workgroup_memory_bytes(words, &p.attach.specializations);
        if shared > lim.max_compute_shared_memory_size as u64 {
            return Ok(Err(format!(
                "shader {} uses {shared} bytes of shared memory, device allows {} (maxComputeSharedMemorySize)",
                p.attach.shader, lim.max_compute_shared_memory_size
            )));
        }
        let (mut full, mut varying, mut required) = (false, false, None);
        if let Some(sg) = &p.subgroup {
            full = sg.fully_populated.unwrap_or(false);
            varying = sg.varying_size.unwrap_or(false);
            if let Some(rs) = &sg.required_size {
                let si = g.subgroup;
                if !si.required_stages_compute {
                    return Ok(Err("device cannot require a subgroup size for compute (requiredSubgroupSizeStages)".into()));
                }
                let n = match rs {
                    RequiredSize::Size(n) => *n,
                    RequiredSize::Min => si.min,
                    RequiredSize::Max => si.max,
                };
                if n < si.min || n > si.max {
                    return Ok(Err(format!(
                        "required subgroup size {n} outside the device's {}..{}",
                        si.min, si.max
                    )));
                }
                required = Some(n);
            }
        }
        let mut bindings = Vec::new();
        let mut used = Vec::new();
        for b in &p.binds {
            let ty = match b.kind {
                DescriptorKind::Storage => vk::DescriptorType::STORAGE_BUFFER,
                DescriptorKind::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
                DescriptorKind::StorageDynamic => vk::DescriptorType::STORAGE_BUFFER_DYNAMIC,
                DescriptorKind::UniformDynamic => vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC,
                DescriptorKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
                DescriptorKind::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
                DescriptorKind::CombinedImageSampler => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                DescriptorKind::UniformTexelBuffer => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
                DescriptorKind::StorageTexelBuffer => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
                DescriptorKind::Sampler => vk::DescriptorType::SAMPLER,
            };
            let mut list = Vec::new();
            for (i, name) in b.buffers.iter().enumerate() {
                if b.kind == DescriptorKind::Sampler {
                    list.push(Resource::Sampler(samplers[name.as_str()]));
                    continue;
                }
                let bs = &bufs[name.as_str()];
                if !used
                    .iter()
                    .any(|(n, l)| n == name && *l == b.base_mip_level)
                {
                    used.push((name.clone(), b.base_mip_level));
                }
                let buffer_id = match bs.gpu {
                    GpuObject::Buffer(id) => id,
                    GpuObject::Image(image) => {
                        list.push(Resource::Image {
                            image,
                            base_level: b.base_mip_level,
                            sampler: b.sampler.as_ref().map(|s| samplers[s.as_str()]),
                        });
                        continue;
                    }
                    GpuObject::HostOnly => unreachable!("bound images are made on the device"),
                };
                if b.kind.is_texel_buffer() {
                    let f = bs
                        .format
                        .expect("the parser checked texel buffers have a format");
                    list.push(Resource::TexelBuffer(buffer_id, f.vk));
                    continue;
                }
                let offset = b.descriptor_offsets[i];
                // WHOLE_SIZE on a dynamic descriptor would reach past the buffer once the
                // dynamic offset is added: the range is what is left after both offsets.
                let range = match (b.descriptor_ranges[i], b.dynamic_offsets.get(i)) {
                    (Some(r), _) => r,
                    (None, Some(&d)) => (bs.bytes.len() as u64)
                        .saturating_sub(offset + d as u64)
                        .max(1),
                    (None, None) => vk::WHOLE_SIZE,
                };
                list.push(Resource::Buffer(buffer_id, offset, range));
            }
            bindings.push(BindingDesc {
                set: b.set,
                binding: b.binding,
                ty,
                resources: list,
                dynamic_offsets: b.dynamic_offsets.clone(),
            });
        }
        let desc = PipelineDesc {
            spirv: words,
            entry: &p.attach.entry_point,
            specs: p
                .attach
                .specializations
                .iter()
                .map(|s| (s.id, s.bits()))
                .collect(),
            bindings,
            push_size,
            full_subgroups: full,
            varying_size: varying,
            required_size: required,
        };
        let id = g.create_pipeline(&desc)?;
        Ok(Ok(PipeState {
            id,
            buffers: used,
            push: p.push_constant.clone(),
        }))
    }
}

fn run_cmds(
    g: &mut Gpu,
    stmts: &[Stmt],
    bufs: &mut HashMap<&str, BufState>,
    pipes: &HashMap<&str, PipeState>,
    timeout: u32,
    t: &mut Timing,
) -> Result<Outcome, AmberError> {
    for s in stmts {
        match &s.cmd {
            Command::Run {
                pipeline, groups, ..
            } => {
                let start = Instant::now();
                let p = &pipes[pipeline.as_str()];
                for (n, base) in &p.buffers {
                    let b = &bufs[n.as_str()];
                    match b.gpu {
                        GpuObject::Buffer(id) => g.upload(id, &b.bytes),
                        GpuObject::Image(id) => g.write_image(id, *base, &b.bytes)?,
                        GpuObject::HostOnly => {}
                    }
                }
                let push = p
                    .push
                    .as_ref()
                    .map(|n| bufs[n.as_str()].bytes.clone())
                    .unwrap_or_default();
                g.dispatch(p.id, *groups, &push, timeout).map_err(|e| {
                    AmberError::Setup(format!("line {}: RUN {pipeline}: {e}", s.line))
                })?;
                for (n, base) in &p.buffers {
                    let b = bufs.get_mut(n.as_str()).expect("bound buffer exists");
                    match b.gpu {
                        GpuObject::Buffer(id) => g.download(id, &mut b.bytes),
                        GpuObject::Image(id) => g.read_image(id, *base, &mut b.bytes)?,
                        GpuObject::HostOnly => {}
                    }
                }
                t.dispatch += start.elapsed();
            }
            Command::Copy { from, to } => {
                let src = bufs[from.as_str()].bytes.clone();
                let dst = bufs.get_mut(to.as_str()).expect("parser checked the name");
                if dst.bytes.len() != src.len() {
                    return Ok(Outcome::Fail(format!(
                        "line {}: COPY {from} TO {to}: sizes differ ({} and {} bytes)",
                        s.line,
                        src.len(),
                        dst.bytes.len()
                    )));
                }
                dst.bytes = src;
            }
            Command::Repeat { count, body } => {
                for _ in 0..*count {
                    let o = run_cmds(g, body, bufs, pipes, timeout, t)?;
                    if o != Outcome::Pass {
                        return Ok(o);
                    }
                }
            }
            Command::Expect(e) => {
                if let Err(msg) = check(e, bufs) {
                    return Ok(Outcome::Fail(format!("line {}: {msg}", s.line)));
                }
            }
            _ => {}
        }
    }
    Ok(Outcome::Pass)
}

/// Amber's comparison of one actual component against one expected value, in the
/// component's own type.
pub fn compare(
    s: Scalar,
    actual: Loaded,
    expected: Value,
    cmp: Comparator,
    tol: Option<Tolerance>,
) -> bool {
    if let Some(tol) = tol {
        return within(
            as_f64(actual),
            expected_in(s, expected),
            tol.value,
            tol.percent,
        );
    }
    match actual {
        Loaded::Float(a) => {
            let e = expected_in(s, expected);
            match cmp {
                Comparator::Eq => within(a, e, EPSILON_PERCENT, true),
                Comparator::Ne => !within(a, e, EPSILON_PERCENT, true),
                Comparator::Lt => a < e,
                Comparator::Le => a <= e,
                Comparator::Gt => a > e,
                Comparator::Ge => a >= e,
            }
        }
        Loaded::Signed(a) => {
            let bits = s.size() * 8;
            let e = ((expected.as_bits() << (64 - bits)) as i64) >> (64 - bits);
            ord(a.cmp(&e), cmp)
        }
        Loaded::Unsigned(a) => {
            let bits = s.size() * 8;
            let e = if bits == 64 {
                expected.as_bits()
            } else {
                expected.as_bits() & ((1u64 << bits) - 1)
            };
            ord(a.cmp(&e), cmp)
        }
    }
}

fn ord(o: std::cmp::Ordering, cmp: Comparator) -> bool {
    use std::cmp::Ordering::*;
    match cmp {
        Comparator::Eq => o == Equal,
        Comparator::Ne => o != Equal,
        Comparator::Lt => o == Less,
        Comparator::Le => o != Greater,
        Comparator::Gt => o == Greater,
        Comparator::Ge => o != Less,
    }
}

fn as_f64(l: Loaded) -> f64 {
    match l {
        Loaded::Signed(v) => v as f64,
        Loaded::Unsigned(v) => v as f64,
        Loaded::Float(v) => v,
    }
}

/// The expected value as the verifier holds it: float32 (float16 too, as Amber does) or
/// double for floats; the integer value for integers.
fn expected_in(s: Scalar, v: Value) -> f64 {
    match s {
        Scalar::F16 | Scalar::F32 => v.as_f64() as f32 as f64,
        Scalar::F64 => v.as_f64(),
        _ if s.is_signed_int() => {
            let bits = s.size() * 8;
            (((v.as_bits() << (64 - bits)) as i64) >> (64 - bits)) as f64
        }
        _ => {
            let bits = s.size() * 8;
            (if bits == 64 {
                v.as_bits()
            } else {
                v.as_bits() & ((1u64 << bits) - 1)
            }) as f64
        }
    }
}

/// Amber's IsEqualWithTolerance: NaN equals only NaN; otherwise |a - e| <= tol (or
/// tol% of |e|). Infinities must match exactly.
pub fn within(a: f64, e: f64, tol: f64, percent: bool) -> bool {
    if a.is_nan() || e.is_nan() {
        return a.is_nan() == e.is_nan();
    }
    if a.is_infinite() || e.is_infinite() {
        return a == e;
    }
    let d = (a - e).abs();
    if percent {
        d <= tol / 100.0 * e.abs()
    } else {
        d <= tol
    }
}

fn check(e: &Expect, bufs: &HashMap<&str, BufState>) -> Result<(), String> {
    match e {
        Expect::Values {
            buffer,
            offset,
            tolerances,
            cmp,
            values,
        } => {
            let b = &bufs[buffer.as_str()];
            let size = b.fmt.size as u64;
            if offset % size != 0 {
                return Err(format!("EXPECT {buffer}: byte offset {offset} is not a multiple of the element size {size}"));
            }
            let n = b.fmt.offsets.len();
            for (i, v) in values.iter().enumerate() {
                let at = offset + b.fmt.value_offset(i);
                let comp_size = b.ty.scalar.size() as u64;
                if at + comp_size > b.bytes.len() as u64 {
                    return Err(format!(
                        "EXPECT {buffer}: byte {} is outside the buffer of {} bytes",
                        at + comp_size,
                        b.bytes.len()
                    ));
                }
                let actual = layout::load(&b.bytes[at as usize..], b.ty.scalar);
                // Several tolerances apply per component; components beyond them get the
                // default (as Amber's documentation says).
                let tol = match tolerances.len() {
                    0 => None,
                    1 => Some(tolerances[0]),
                    k if i % n < k => Some(tolerances[i % n]),
                    _ => Some(Tolerance {
                        value: EPSILON_PERCENT,
                        percent: true,
                    }),
                };
                if !compare(b.ty.scalar, actual, *v, *cmp, tol) {
                    let tol_s = tol.map(|t| format!(" TOLERANCE {t}")).unwrap_or_default();
                    return Err(format!(
                        "EXPECT {buffer} at byte offset {at} (value {i} of {}):{tol_s} expected {cmp} {v}, actual {actual} ({})",
                        values.len(),
                        b.ty.scalar
                    ));
                }
            }
            Ok(())
        }
        Expect::EqBuffer { a, b } => {
            let (x, y) = (&bufs[a.as_str()].bytes, &bufs[b.as_str()].bytes);
            if x.len() != y.len() {
                return Err(format!(
                    "EXPECT {a} EQ_BUFFER {b}: sizes differ ({} and {} bytes)",
                    x.len(),
                    y.len()
                ));
            }
            let diffs: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
            if let Some(&first) = diffs.first() {
                return Err(format!(
                    "EXPECT {a} EQ_BUFFER {b}: {} bytes differ, first at byte offset {first}: {} != {}",
                    diffs.len(),
                    x[first],
                    y[first]
                ));
            }
            Ok(())
        }
        Expect::Rmse { a, b, tolerance } => {
            let (x, y) = (&bufs[a.as_str()], &bufs[b.as_str()]);
            if x.bytes.len() != y.bytes.len() {
                return Err(format!(
                    "EXPECT {a} RMSE_BUFFER {b}: sizes differ ({} and {} bytes)",
                    x.bytes.len(),
                    y.bytes.len()
                ));
            }
            let elems = x.bytes.len() / x.fmt.size as usize;
            let mut sum = 0.0;
            let mut n = 0usize;
            for i in 0..elems * x.fmt.offsets.len() {
                let at = x.fmt.value_offset(i) as usize;
                let d = as_f64(layout::load(&x.bytes[at..], x.ty.scalar))
                    - as_f64(layout::load(&y.bytes[at..], y.ty.scalar));
                sum += d * d;
                n += 1;
            }
            let rmse = if n == 0 { 0.0 } else { (sum / n as f64).sqrt() };
            if rmse > *tolerance || rmse.is_nan() {
                return Err(format!("EXPECT {a} RMSE_BUFFER {b}: root mean square error {rmse} is greater than tolerance {tolerance}"));
            }
            Ok(())
        }
    }
}

impl Summary {
    /// The `--timing` report. `compile_wall` is the wall time of the parallel compile
    /// pre-pass (zero when shaders were compiled one by one during the run).
    pub fn timing_report(&self, wall: Duration, compile_wall: Duration) -> String {
        let t = &self.timing;
        let serial_compile = t.compile.saturating_sub(compile_wall.min(t.compile));
        let compile_in_wall = if compile_wall.is_zero() {
            t.compile
        } else {
            compile_wall + serial_compile
        };
        let overhead = wall.saturating_sub(compile_in_wall + t.pipeline);
        let pct = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64().max(1e-9);
        format!(
            "timing: wall {:.1} ms for {} files\n\
             timing:   shader compile: {} tool runs (glslangValidator/spirv-as), {} cache hits; {:.1} ms summed over shaders, {:.1} ms of wall\n\
             timing:   pipeline creation (vkCreateShaderModule + vkCreateComputePipelines): {:.1} ms\n\
             timing:   runner overhead (wall - compile - pipeline creation): {:.1} ms ({:.0}% of wall; compile + pipeline creation summed: {:.1} ms)\n\
             timing:     of which parse {:.2} ms, instance+device creation {:.1} ms, dispatch+upload+readback {:.1} ms, other {:.1} ms",
            ms(wall),
            self.passed + self.failed + self.skipped,
            self.cache_misses,
            self.cache_hits,
            ms(t.compile),
            ms(compile_in_wall),
            ms(t.pipeline),
            ms(overhead),
            pct(overhead),
            ms(t.compile + t.pipeline),
            ms(t.parse),
            ms(t.device),
            ms(t.dispatch),
            ms(overhead.saturating_sub(t.parse + t.device + t.dispatch)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_eq_is_relative_epsilon() {
        let e = Value::Float(1.0);
        assert!(compare(
            Scalar::F32,
            Loaded::Float(1.0),
            e,
            Comparator::Eq,
            None
        ));
        assert!(!compare(
            Scalar::F32,
            Loaded::Float(1.0 + 1e-6),
            e,
            Comparator::Eq,
            None
        ));
        assert!(compare(
            Scalar::F32,
            Loaded::Float(f64::NAN),
            Value::Float(f64::NAN),
            Comparator::Eq,
            None
        ));
        assert!(!compare(
            Scalar::F32,
            Loaded::Float(f64::INFINITY),
            Value::Float(f64::NEG_INFINITY),
            Comparator::Eq,
            None
        ));
        // The expected value is rounded to float32 first, so 0.1 matches float32 0.1.
        assert!(compare(
            Scalar::F32,
            Loaded::Float(0.1f32 as f64),
            Value::Float(0.1),
            Comparator::Eq,
            None
        ));
        assert!(!compare(
            Scalar::F64,
            Loaded::Float(0.1f32 as f64),
            Value::Float(0.1),
            Comparator::Eq,
            None
        ));
    }

    #[test]
    fn tolerance_absolute_and_percent() {
        let abs = Some(Tolerance {
            value: 1.0,
            percent: false,
        });
        let pct = Some(Tolerance {
            value: 1.0,
            percent: true,
        });
        assert!(compare(
            Scalar::F32,
            Loaded::Float(2.0),
            Value::Float(2.99),
            Comparator::Eq,
            abs
        ));
        assert!(!compare(
            Scalar::F32,
            Loaded::Float(2.0),
            Value::Float(3.01),
            Comparator::Eq,
            abs
        ));
        assert!(compare(
            Scalar::F32,
            Loaded::Float(2.0),
            Value::Float(2.0199),
            Comparator::Eq,
            pct
        ));
        assert!(!compare(
            Scalar::F32,
            Loaded::Float(2.0),
            Value::Float(2.03),
            Comparator::Eq,
            pct
        ));
        assert!(compare(
            Scalar::I32,
            Loaded::Signed(10),
            Value::Int(11),
            Comparator::Eq,
            abs
        ));
    }

    #[test]
    fn integers_wrap_and_order_in_their_type() {
        assert!(compare(
            Scalar::U8,
            Loaded::Unsigned(255),
            Value::Int(-1),
            Comparator::Eq,
            None
        ));
        assert!(compare(
            Scalar::I8,
            Loaded::Signed(-1),
            Value::Int(255),
            Comparator::Eq,
            None
        ));
        assert!(compare(
            Scalar::I8,
            Loaded::Signed(-1),
            Value::Int(0),
            Comparator::Lt,
            None
        ));
        assert!(compare(
            Scalar::U32,
            Loaded::Unsigned(0xffff_ffff),
            Value::Int(0),
            Comparator::Gt,
            None
        ));
        assert!(compare(
            Scalar::I64,
            Loaded::Signed(i64::MIN),
            Value::Int(0x8000_0000_0000_0000),
            Comparator::Eq,
            None
        ));
        assert!(compare(
            Scalar::U64,
            Loaded::Unsigned(u64::MAX),
            Value::Int(-1),
            Comparator::Ge,
            None
        ));
        assert!(!compare(
            Scalar::I16,
            Loaded::Signed(5),
            Value::Int(5),
            Comparator::Ne,
            None
        ));
    }
}
