//! The simulated Gen9 sampler (shared function 2): sample_l, sample_lz, ld, ld_lz, gather4,
//! gather4_po, resinfo and sampleinfo in SIMD8 and SIMD16 forms. Message layouts come from
//! `ferrite_isa::sampler_msg`, texel decoding from the shared format codec, addresses from
//! the image layout module. The filtering follows the Vulkan spec's "Texel Coordinate
//! Operations" and "Texel Filtering": LOD = explicit LOD + sampler bias clamped to the
//! sampler's [min, max]; magnification when it is <= 0; mip selection nearest
//! (`ceil(lod + 0.5) - 1`) or linear between `floor` and `floor + 1`; nearest texel
//! `floor(u)`, linear footprint from `floor(u - 0.5)` with the fractional weights rounded to
//! 8 bits (Gen9's sub-texel precision); address modes wrap, mirror, clamp, clamp to border
//! and mirror once on integer texel coordinates. Cube maps pick the face of the major axis;
//! linear filtering across a face's edge reads the neighbouring face (seamless), a corner
//! the average of the three faces' corner texels; nearest filtering clamps to the face. [`reference`] is an
//! independent implementation of the same spec rules used by the tests.

pub mod reference;
#[cfg(test)]
mod tests;

use crate::genxml::{SamplerBorderColorState, SamplerState};
use crate::gpu::dataport::Surface;
use crate::gpu::memory::GpuMemory;
use crate::gpu::surface::{ImageKind, ImageSurface};
use ferrite_isa::sampler_msg::{payload_params, Param, SamplerDesc, SamplerHeader, SamplerMsgType};
use ferrite_isa::surface_format::{NumericClass, SurfaceFormat};

/// Texture coordinate (address) modes of SAMPLER_STATE (TCM_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    Wrap,
    Mirror,
    Clamp,
    /// Cube-map addressing: clamp to the face's edge here.
    Cube,
    ClampBorder,
    MirrorOnce,
}

impl AddressMode {
    pub fn from_hw(v: u64) -> Result<Self, String> {
        Ok(match v {
            0 => AddressMode::Wrap,
            1 => AddressMode::Mirror,
            2 => AddressMode::Clamp,
            3 => AddressMode::Cube,
            4 => AddressMode::ClampBorder,
            5 => AddressMode::MirrorOnce,
            m => return Err(format!("texture coordinate mode {m} is not implemented")),
        })
    }
}

/// Mip filter of SAMPLER_STATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MipFilter {
    None,
    Nearest,
    Linear,
}

/// A decoded SAMPLER_STATE with its border colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplerParams {
    pub min_linear: bool,
    pub mag_linear: bool,
    pub mip: MipFilter,
    /// U, V, R.
    pub address: [AddressMode; 3],
    pub lod_bias: f32,
    pub min_lod: f32,
    pub max_lod: f32,
    pub unnormalized: bool,
    /// Border colour as register bits (f32 for float formats, integers for integer ones:
    /// the border-colour state holds both interpretations of the same dwords).
    pub border: [u32; 4],
}

impl SamplerParams {
    /// Decodes SAMPLER_STATE dwords and the border colour it points at.
    pub fn decode(dw: &[u32; 4], border: &[u32; 4]) -> Result<SamplerParams, String> {
        let s = SamplerState::unpack(dw);
        let filter = |f: u64, what: &str| match f {
            0 => Ok(false),
            1 => Ok(true),
            m => Err(format!("{what} filter {m} is not implemented")),
        };
        let mip = match s.mip_mode_filter {
            0 => MipFilter::None,
            1 => MipFilter::Nearest,
            3 => MipFilter::Linear,
            m => return Err(format!("mip filter {m} is not valid")),
        };
        if s.reduction_type_enable && s.reduction_type != 0 {
            return Err("sampler reduction/comparison modes are not implemented".into());
        }
        let bias = ((s.texture_lod_bias as i32) << 19 >> 19) as f32 / 256.0;
        let b = SamplerBorderColorState::unpack(border);
        Ok(SamplerParams {
            min_linear: filter(s.min_mode_filter, "min")?,
            mag_linear: filter(s.mag_mode_filter, "mag")?,
            mip,
            address: [
                AddressMode::from_hw(s.tcx_address_control_mode)?,
                AddressMode::from_hw(s.tcy_address_control_mode)?,
                AddressMode::from_hw(s.tcz_address_control_mode)?,
            ],
            lod_bias: bias,
            min_lod: s.min_lod as f32 / 256.0,
            max_lod: s.max_lod as f32 / 256.0,
            unnormalized: s.non_normalized_coordinate_enable,
            border: [
                b.border_color_32bit_red as u32,
                b.border_color_32bit_green as u32,
                b.border_color_32bit_blue as u32,
                b.border_color_32bit_alpha as u32,
            ],
        })
    }
}

/// Rounds a filter weight to Gen9's 8 fractional bits.
fn weight8(f: f64) -> f64 {
    (f * 256.0).round() / 256.0
}

/// Applies an address mode to integer texel coordinate `i` of a `size`-texel dimension:
/// the coordinate to read, or None for a border texel.
pub fn wrap(i: i64, size: i64, mode: AddressMode) -> Option<i64> {
    let mirror = |a: i64| if a >= 0 { a } else { -(1 + a) };
    match mode {
        AddressMode::Wrap => Some(i.rem_euclid(size)),
        AddressMode::Mirror => {
            let t = i.rem_euclid(2 * size) - size;
            Some(size - 1 - mirror(t))
        }
        AddressMode::Clamp | AddressMode::Cube => Some(i.clamp(0, size - 1)),
        AddressMode::ClampBorder => (0..size).contains(&i).then_some(i),
        AddressMode::MirrorOnce => Some(mirror(i).clamp(0, size - 1)),
    }
}

/// Cube face selection (Vulkan "Cube Map Face Selection"): (face, s, t) with s, t in [0, 1],
/// computed in f64 so that the face coordinates carry no rounding of their own.
pub fn cube_face(x: f64, y: f64, z: f64) -> (u32, f64, f64) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    // Ties: z wins over y and x, y over x (the rule the spec recommends).
    let (face, sc, tc, ma) = if az >= ax && az >= ay {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if x >= 0.0 {
        (0, -z, -y, ax)
    } else {
        (1, z, -y, ax)
    };
    if ma == 0.0 {
        return (face, 0.5, 0.5);
    }
    (face, 0.5 * (sc / ma + 1.0), 0.5 * (tc / ma + 1.0))
}

/// The direction that [`cube_face`] maps to face `face` at face coordinates (sc, tc)
/// in [-1, 1] (outside that range: beyond the face's edges), with |major axis| = 1.
pub fn face_direction(face: u32, sc: f64, tc: f64) -> [f64; 3] {
    match face {
        0 => [1.0, -tc, -sc],
        1 => [-1.0, -tc, sc],
        2 => [sc, 1.0, tc],
        3 => [sc, -1.0, -tc],
        4 => [sc, -tc, 1.0],
        _ => [-sc, -tc, -1.0],
    }
}

/// One lane's request.
struct Lane {
    /// Coordinates U, V, R, AI as sent (f32 bits or integers).
    coord: [u32; 4],
    lod: u32,
    off: [i32; 2],
    /// sample_d's derivatives (d/dx, d/dy) of U, V, R as f32 bits.
    grad: [[u32; 2]; 3],
}

/// Sampler inputs shared by every lane of a message.
struct Ctx<'a> {
    mem: &'a GpuMemory,
    im: &'a ImageSurface,
    s: &'a SamplerParams,
    offsets: [i32; 3],
}

impl Ctx<'_> {
    /// The border colour as a texel of the format: the format's components take the
    /// border's values, missing ones read 0 (alpha 1) as any texel of the format would
    /// (Vulkan "Border Replacement").
    fn border(&self) -> [u32; 4] {
        let f = self.im.format;
        let mut b = self.s.border;
        for (c, v) in b.iter_mut().enumerate() {
            if !f.has_component(c as u8) {
                *v = f.missing_component(c);
            }
        }
        b
    }

    /// Texel at absolute level `level`, view layer/3-D slice `z`, with address modes; the
    /// border colour when outside. Register bits.
    fn texel(&self, x: i64, y: i64, z: i64, level: u32) -> Result<[u32; 4], String> {
        let e = self.im.level_extent(level);
        if self.im.kind == ImageKind::Cube {
            return self.cube_texel(x, y, z, level, e[0] as i64);
        }
        let dims = match self.im.kind {
            ImageKind::D1 => 1,
            ImageKind::D2 | ImageKind::Cube => 2,
            ImageKind::D3 => 3,
        };
        let c = [x, y, z];
        let mut w = [0u32; 3];
        for d in 0..3 {
            if d < dims {
                match wrap(c[d], e[d] as i64, self.s.address[d]) {
                    Some(v) => w[d] = v as u32,
                    None => return Ok(self.border()),
                }
            } else {
                w[d] = c[d] as u32;
            }
        }
        Ok(self
            .im
            .load(self.mem, w[0], w[1], w[2], level)?
            .unwrap_or_else(|| self.border()))
    }

    /// Seamless cube-map texel (Vulkan "Cube Map Edge Handling"): a texel beyond one edge of
    /// face `layer % 6` comes from the neighbouring face (found by turning the texel centre
    /// into a direction and selecting its face again); a texel beyond two edges (a corner)
    /// is the average of the three faces' corner texels.
    fn cube_texel(
        &self,
        x: i64,
        y: i64,
        layer: i64,
        level: u32,
        n: i64,
    ) -> Result<[u32; 4], String> {
        let inside = |v: i64| (0..n).contains(&v);
        let load = |x: i64, y: i64, layer: i64| -> Result<[u32; 4], String> {
            Ok(self
                .im
                .load(self.mem, x as u32, y as u32, layer as u32, level)?
                .unwrap_or_else(|| self.border()))
        };
        let face = layer % 6;
        let first = layer - face;
        let across = |x: i64, y: i64| -> Result<[u32; 4], String> {
            let sc = 2.0 * (x as f64 + 0.5) / n as f64 - 1.0;
            let tc = 2.0 * (y as f64 + 0.5) / n as f64 - 1.0;
            let dir = face_direction(face as u32, sc, tc);
            let (f2, s2, t2) = cube_face(dir[0], dir[1], dir[2]);
            let x2 = ((s2 * n as f64).floor() as i64).clamp(0, n - 1);
            let y2 = ((t2 * n as f64).floor() as i64).clamp(0, n - 1);
            load(x2, y2, first + f2 as i64)
        };
        match (inside(x), inside(y)) {
            (true, true) => load(x, y, layer),
            (false, false) => {
                let (cx, cy) = (x.clamp(0, n - 1), y.clamp(0, n - 1));
                let t = [load(cx, cy, layer)?, across(x, cy)?, across(cx, y)?];
                Ok([0, 1, 2, 3].map(|c| {
                    let sum: f64 = t.iter().map(|v| f32::from_bits(v[c]) as f64).sum();
                    ((sum / 3.0) as f32).to_bits()
                }))
            }
            _ => across(x, y),
        }
    }

    /// Filtered sample of one level at normalized (or unnormalized) coordinates.
    fn sample_level(
        &self,
        st: [f64; 3],
        layer: i64,
        level: u32,
        linear: bool,
    ) -> Result<[f64; 4], String> {
        let e = self.im.level_extent(level);
        let dims = match self.im.kind {
            ImageKind::D1 => 1,
            ImageKind::D2 | ImageKind::Cube => 2,
            ImageKind::D3 => 3,
        };
        let float = self.im.format.numeric_class() == NumericClass::Float;
        let linear = linear && float;
        let mut uvw = [0f64; 3];
        for d in 0..dims {
            let scale = if self.s.unnormalized {
                1.0
            } else {
                e[d] as f64
            };
            uvw[d] = st[d] * scale + self.offsets[d] as f64;
        }
        let to_f = |t: [u32; 4]| t.map(|v| f32::from_bits(v) as f64);
        if !linear {
            let i = |d: usize| {
                if d >= dims {
                    0
                } else if self.im.kind == ImageKind::Cube {
                    // Nearest filtering of a cube map clamps to the face's edge.
                    (uvw[d].floor() as i64).clamp(0, e[d] as i64 - 1)
                } else {
                    uvw[d].floor() as i64
                }
            };
            let z = if dims == 3 { i(2) } else { layer };
            let t = self.texel(i(0), i(1), z, level)?;
            return Ok(if float { to_f(t) } else { t.map(|v| v as f64) });
        }
        let mut base = [0i64; 3];
        let mut frac = [0f64; 3];
        for d in 0..dims {
            let u = uvw[d] - 0.5;
            base[d] = u.floor() as i64;
            frac[d] = weight8(u - u.floor());
        }
        let mut acc = [0f64; 4];
        let corners = 1usize << dims;
        for k in 0..corners {
            let mut wgt = 1.0;
            let mut c = [0i64; 3];
            for d in 0..dims {
                let hi = (k >> d) & 1 == 1;
                c[d] = base[d] + hi as i64;
                wgt *= if hi { frac[d] } else { 1.0 - frac[d] };
            }
            if wgt == 0.0 {
                continue;
            }
            let z = if dims == 3 { c[2] } else { layer };
            let t = to_f(self.texel(c[0], c[1], z, level)?);
            for ch in 0..4 {
                acc[ch] += wgt * t[ch];
            }
        }
        Ok(acc)
    }
}

/// Register bits of a result (f32 for float formats, the integer for integer ones).
fn result_bits(v: [f64; 4], fmt: SurfaceFormat) -> [u32; 4] {
    match fmt.numeric_class() {
        NumericClass::Float => v.map(|x| (x as f32).to_bits()),
        _ => v.map(|x| x as u32),
    }
}

/// Executes one sampler message. `surface` is the binding-table surface of the
/// descriptor, `sampler` the decoded sampler state (None for messages that take none).
#[allow(clippy::too_many_arguments)]
pub fn execute(
    mem: &GpuMemory,
    desc: &SamplerDesc,
    surface: &Surface,
    sampler: Option<&SamplerParams>,
    exec_mask: u32,
    payload: &[u8],
    response: &mut [u8],
) -> Result<(), String> {
    let simd = desc.simd.width() as usize;
    let rpp = desc.simd.regs_per_param() as usize;
    let hdr = desc.header as usize;
    let header = if desc.header {
        SamplerHeader::from_dw2(u32::from_le_bytes(
            payload[8..12].try_into().unwrap_or_default(),
        ))
    } else {
        SamplerHeader::default()
    };
    let nparams = (payload.len() / 32).saturating_sub(hdr) / rpp;
    let order = payload_params(desc.msg);
    if nparams > order.len() {
        return Err(format!(
            "{desc}: {nparams} parameters, the message takes {}",
            order.len()
        ));
    }
    let channels: Vec<usize> = header.returned_channels().collect();
    if response.len() < channels.len() * rpp * 32 {
        return Err(format!(
            "{desc}: response shorter than the returned channels"
        ));
    }
    let param = |p: Param, lane: usize| -> u32 {
        match order[..nparams].iter().position(|&q| q == p) {
            Some(i) => {
                let at = (hdr + i * rpp) * 32 + 4 * lane;
                u32::from_le_bytes(payload[at..at + 4].try_into().unwrap_or_default())
            }
            None => 0,
        }
    };
    for l in (0..simd).filter(|&l| exec_mask & (1 << l) != 0) {
        let lane = Lane {
            coord: [
                param(Param::U, l),
                param(Param::V, l),
                param(Param::R, l),
                param(Param::Ai, l),
            ],
            lod: param(Param::Lod, l),
            off: [param(Param::OffU, l) as i32, param(Param::OffV, l) as i32],
            grad: [
                [param(Param::DuDx, l), param(Param::DuDy, l)],
                [param(Param::DvDx, l), param(Param::DvDy, l)],
                [param(Param::DrDx, l), param(Param::DrDy, l)],
            ],
        };
        let out = one_lane(mem, desc.msg, surface, sampler, &header, &lane)?;
        for (k, &ch) in channels.iter().enumerate() {
            let at = k * rpp * 32 + 4 * l;
            response[at..at + 4].copy_from_slice(&out[ch].to_le_bytes());
        }
    }
    Ok(())
}

fn one_lane(
    mem: &GpuMemory,
    msg: SamplerMsgType,
    surface: &Surface,
    sampler: Option<&SamplerParams>,
    header: &SamplerHeader,
    lane: &Lane,
) -> Result<[u32; 4], String> {
    let im = match surface {
        Surface::Image(im) => im,
        Surface::Null => return Ok([0; 4]),
        Surface::Buffer {
            size,
            stride,
            format,
            base,
        } => {
            return buffer_lane(mem, msg, *base, *size, *stride, *format, lane);
        }
        Surface::Stateless { .. } => return Err("sampler message to a stateless surface".into()),
    };
    if !im.format.info().sample {
        return Err(format!("the Gen9 sampler cannot read {}", im.format));
    }
    let levels = im.mip_count_lod + 1;
    let dims = match im.kind {
        ImageKind::D1 => 1,
        ImageKind::D2 | ImageKind::Cube => 2,
        ImageKind::D3 => 3,
    };
    match msg {
        SamplerMsgType::Resinfo => {
            let lod = lane.lod;
            if lod >= levels {
                return Ok([0, 0, 0, levels]);
            }
            let e = im.layout.level_extent(im.min_lod + lod);
            return Ok(match im.kind {
                ImageKind::D1 => [e[0], if im.arrayed { im.layers } else { 0 }, 0, levels],
                ImageKind::D2 => [e[0], e[1], if im.arrayed { im.layers } else { 0 }, levels],
                ImageKind::Cube => [
                    e[0],
                    e[1],
                    if im.arrayed { im.layers / 6 } else { 0 },
                    levels,
                ],
                ImageKind::D3 => [e[0], e[1], e[2], levels],
            });
        }
        SamplerMsgType::Sampleinfo => return Ok([1, 0, 0, 0]),
        SamplerMsgType::Ld | SamplerMsgType::LdLz => {
            let c = lane.coord.map(|v| v as i32 as i64);
            let lod = if msg == SamplerMsgType::Ld {
                lane.lod as i32 as i64
            } else {
                0
            };
            if lod < 0 || lod >= levels as i64 {
                return Ok([0; 4]);
            }
            let level = im.min_lod + lod as u32;
            let o = header.offsets.map(|v| v as i64);
            let (x, y, z) = match (im.kind, dims) {
                (ImageKind::D1, _) => (c[0] + o[0], 0, if im.arrayed { c[1] } else { 0 }),
                (ImageKind::D3, _) => (c[0] + o[0], c[1] + o[1], c[2] + o[2]),
                _ => (c[0] + o[0], c[1] + o[1], if im.arrayed { c[2] } else { 0 }),
            };
            if x < 0
                || y < 0
                || z < 0
                || x > u32::MAX as i64
                || y > u32::MAX as i64
                || z > u32::MAX as i64
            {
                return Ok([0; 4]);
            }
            let t = im.load(mem, x as u32, y as u32, z as u32, level)?;
            return Ok(t.map(|t| im.swizzle(t)).unwrap_or([0; 4]));
        }
        _ => {}
    }
    let s = sampler.ok_or("sampling message without a sampler state")?;
    let f = lane.coord.map(f32::from_bits);
    // Coordinates, the layer and (cube) the face.
    let (st, layer) = match im.kind {
        ImageKind::D1 => ([f[0] as f64, 0.0, 0.0], if im.arrayed { f[1] } else { 0.0 }),
        ImageKind::D2 => (
            [f[0] as f64, f[1] as f64, 0.0],
            if im.arrayed { f[2] } else { 0.0 },
        ),
        ImageKind::D3 => ([f[0] as f64, f[1] as f64, f[2] as f64], 0.0),
        ImageKind::Cube => {
            let (face, s, t) = cube_face(f[0] as f64, f[1] as f64, f[2] as f64);
            let cube = if im.arrayed {
                f[3].round_ties_even().max(0.0)
            } else {
                0.0
            };
            let cubes = (im.layers / 6).max(1) as f32;
            ([s, t, 0.0], cube.min(cubes - 1.0) * 6.0 + face as f32)
        }
    };
    let layer = if im.kind == ImageKind::Cube {
        layer as i64
    } else {
        (layer.round_ties_even() as i64).clamp(0, im.layers as i64 - 1)
    };
    let mut ctx = Ctx {
        mem,
        im,
        s,
        offsets: header.offsets.map(|v| v as i32),
    };
    if im.kind == ImageKind::Cube {
        // Cube maps ignore the address modes (edges are seamless) and take no offsets.
        ctx.offsets = [0; 3];
    }
    sample(&ctx, msg, st, layer, lane, header)
}

fn sample(
    ctx: &Ctx<'_>,
    msg: SamplerMsgType,
    st: [f64; 3],
    layer: i64,
    lane: &Lane,
    header: &SamplerHeader,
) -> Result<[u32; 4], String> {
    let im = ctx.im;
    let s = ctx.s;
    let q = im.mip_count_lod as f64;
    match msg {
        SamplerMsgType::Gather4 | SamplerMsgType::Gather4Po => {
            let level = im.min_lod;
            let e = im.level_extent(level);
            let mut base = [0i64; 2];
            for d in 0..2 {
                let scale = if s.unnormalized { 1.0 } else { e[d] as f64 };
                let extra = if msg == SamplerMsgType::Gather4Po {
                    // gather4_po reads the low 6 bits of each offset as a signed value
                    // (-32..31, Vulkan's min/maxTexelGatherOffset on anv as well).
                    (lane.off[d] << 26) >> 26
                } else {
                    ctx.offsets[d]
                };
                base[d] = (st[d] * scale + extra as f64 - 0.5).floor() as i64;
            }
            let comp = header.gather_component as usize;
            // Vulkan's order: (i0, j1), (i1, j1), (i1, j0), (i0, j0).
            let at = [(0, 1), (1, 1), (1, 0), (0, 0)];
            let mut out = [0u32; 4];
            for (k, (di, dj)) in at.iter().enumerate() {
                let t = ctx.texel(base[0] + di, base[1] + dj, layer, level)?;
                out[k] = im.swizzle(t)[comp];
            }
            Ok(out)
        }
        SamplerMsgType::SampleL | SamplerMsgType::SampleLz | SamplerMsgType::SampleD => {
            let lod_in = match msg {
                SamplerMsgType::SampleL => f32::from_bits(lane.lod) as f64,
                SamplerMsgType::SampleD => grad_lod(im, s, &lane.grad)?,
                _ => 0.0,
            };
            let lambda = (lod_in + s.lod_bias as f64).clamp(s.min_lod as f64, s.max_lod as f64);
            let linear = if lambda <= 0.0 {
                s.mag_linear
            } else {
                s.min_linear
            };
            let base = im.min_lod;
            let v = if s.unnormalized {
                ctx.sample_level(st, layer, base, linear)?
            } else {
                match s.mip {
                    MipFilter::None => ctx.sample_level(st, layer, base, linear)?,
                    MipFilter::Nearest => {
                        let d = (lambda.clamp(0.0, q) + 0.5).ceil() - 1.0;
                        ctx.sample_level(st, layer, base + d as u32, linear)?
                    }
                    MipFilter::Linear => {
                        let d = lambda.clamp(0.0, q);
                        let lo = d.floor();
                        let w = weight8(d - lo);
                        let a = ctx.sample_level(st, layer, base + lo as u32, linear)?;
                        if w == 0.0 {
                            a
                        } else {
                            let b = ctx.sample_level(
                                st,
                                layer,
                                base + (lo as u32 + 1).min(q as u32),
                                linear,
                            )?;
                            [0, 1, 2, 3].map(|c| a[c] * (1.0 - w) + b[c] * w)
                        }
                    }
                }
            };
            Ok(im.swizzle(result_bits(v, im.format)))
        }
        // sample and lod compute the LOD from derivatives between the lanes of 2x2
        // subspans, which compute dispatches do not have: not modelled.
        m => Err(format!("sampler message {m} is not implemented")),
    }
}

/// sample_d's LOD from the derivatives (Vulkan "Scale Factor Operation, LOD Operation and
/// Image Level(s) Selection"): the derivatives are scaled to texels of the view's base
/// level, `rho_x = |(du/dx, dv/dx, dw/dx)|`, `rho_y` likewise, and `lambda_base =
/// log2(max(rho_x, rho_y))` (the spec's isotropic formula, computed exactly here; the spec
/// lets an implementation approximate it). -inf for zero derivatives, which the LOD clamp
/// then takes to minLod.
fn grad_lod(im: &ImageSurface, s: &SamplerParams, grad: &[[u32; 2]; 3]) -> Result<f64, String> {
    let dims = match im.kind {
        ImageKind::D1 => 1,
        ImageKind::D2 => 2,
        ImageKind::D3 => 3,
        // Cube derivatives would have to be projected onto the selected face first.
        ImageKind::Cube => return Err("sample_d on a cube surface is not implemented".into()),
    };
    if s.unnormalized {
        return Err("sample_d with unnormalized coordinates".into());
    }
    let e = im.level_extent(im.min_lod);
    let rho = |k: usize| -> f64 {
        (0..dims)
            .map(|d| f32::from_bits(grad[d][k]) as f64 * e[d] as f64)
            .map(|v| v * v)
            .sum::<f64>()
            .sqrt()
    };
    Ok(rho(0).max(rho(1)).log2())
}

/// Sampler messages on a buffer surface (texel buffers): ld and resinfo.
fn buffer_lane(
    mem: &GpuMemory,
    msg: SamplerMsgType,
    base: u64,
    size: u64,
    stride: u64,
    format: u32,
    lane: &Lane,
) -> Result<[u32; 4], String> {
    let n = size.checked_div(stride).unwrap_or(0);
    match msg {
        SamplerMsgType::Resinfo => Ok([n as u32, 0, 0, 1]),
        SamplerMsgType::Ld | SamplerMsgType::LdLz => {
            let fmt = SurfaceFormat::from_hw(format).ok_or_else(|| {
                format!("buffer surface format {format} is not in the format table")
            })?;
            let x = lane.coord[0] as u64;
            if x >= n {
                return Ok([0; 4]);
            }
            let mut raw = [0u8; 16];
            let b = fmt.bytes_per_texel() as usize;
            mem.read(base + x * stride, &mut raw[..b])
                .map_err(|e| e.to_string())?;
            Ok(fmt.decode(&raw))
        }
        m => Err(format!("sampler message {m} on a buffer surface")),
    }
}
