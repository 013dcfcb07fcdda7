//! The simulated sampler against the reference sampler over a seeded random sweep of
//! formats, image kinds, tilings, samplers, coordinates and LODs; and typed messages on
//! tiled against linear surfaces. `FERRITE_SAMPLER_SWEEP=<cases>[:<seed>]` enlarges the
//! sweep (scripts/sim-sweep).

use super::reference::{RefImage, RefKind, RefLevel, RefSampler, RefWrap};
use crate::genxml::{BindingTableState, RenderSurfaceState, SamplerBorderColorState, SamplerState};
use crate::gpu::dataport::{Port, SurfaceContext, SFID_DC1, SFID_SAMPLER};
use crate::gpu::eu::{Message, MessagePort};
use crate::gpu::memory::GpuMemory;
use crate::image::{ImageDesc, ImageDim, ImageLayout, Tiling};
use crate::sim::{BoMemory, ExecObject};
use ferrite_isa::random::Rng;
use ferrite_isa::sampler_msg::{SamplerDesc, SamplerHeader, SamplerMsgType, SamplerSimd};
use ferrite_isa::surface_format::{NumericClass, SurfaceFormat};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

const BASE: u64 = 0x10_0000;
const BT: u64 = 0;
const SS: u64 = 0x40;
const SAMPLER: u64 = 0x80;
const BORDER: u64 = 0xC0;
const IMAGE: u64 = 0x1000;

/// One GPU address space with state at BASE and an image at BASE + IMAGE.
struct Bed {
    mem: GpuMemory,
    ctx: SurfaceContext,
}

impl Bed {
    fn new(image_bytes: u64) -> Bed {
        let len = (IMAGE + image_bytes).div_ceil(4096) * 4096;
        let bo = BoMemory::new(len as usize, Arc::new(AtomicUsize::new(0))).expect("mmap");
        let obj = ExecObject {
            handle: 1,
            address: BASE,
            size: len,
            flags: 0,
            memory: Arc::new(bo),
        };
        let mem = GpuMemory::new(&[obj], GpuMemory::new_scratch_page(), true);
        let bt = BindingTableState {
            surface_state_pointer: SS,
        }
        .to_dwords();
        mem.write_u32(BASE + BT, bt[0]).unwrap();
        Bed {
            mem,
            ctx: SurfaceContext {
                surface_state_base: BASE,
                binding_table: BT,
                general_state_base: 0,
                dynamic_state_base: BASE,
                sampler_state_pointer: SAMPLER,
            },
        }
    }

    fn write_dwords(&self, at: u64, dw: &[u32]) {
        for (i, d) in dw.iter().enumerate() {
            self.mem.write_u32(BASE + at + 4 * i as u64, *d).unwrap();
        }
    }

    fn send(&self, sfid: u8, desc: u32, exec_mask: u32, payload: &[u8], rlen: usize) -> Vec<u8> {
        let mut cache = [None; 253];
        let mut slm = [];
        let mut port = Port::new(&self.mem, &self.ctx, &mut cache, &mut slm);
        let mut resp = vec![0u8; rlen * 32];
        port.send(Message {
            sfid,
            desc,
            ex_desc: sfid as u32,
            exec_size: 8,
            exec_mask,
            payload,
            response: &mut resp,
        })
        .unwrap_or_else(|e| panic!("send {desc:#010x}: {e}"));
        resp
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    D1,
    D2,
    D3,
    Cube,
}

#[derive(Debug, Clone)]
struct Case {
    kind: Kind,
    arrayed: bool,
    format: SurfaceFormat,
    tiling: Tiling,
    extent: [u32; 3],
    levels: u32,
    layers: u32,
}

impl Case {
    fn desc(&self) -> ImageDesc {
        ImageDesc {
            dim: match self.kind {
                Kind::D1 => ImageDim::D1,
                Kind::D2 | Kind::Cube => ImageDim::D2,
                Kind::D3 => ImageDim::D3,
            },
            format: self.format,
            extent: self.extent,
            levels: self.levels,
            layers: self.layers,
            tiling: self.tiling,
        }
    }

    fn surface_state(&self, layout: &ImageLayout) -> RenderSurfaceState {
        let f = layout.surface_state_fields();
        RenderSurfaceState {
            surface_type: match self.kind {
                Kind::D1 => 0,
                Kind::D2 => 1,
                Kind::D3 => 2,
                Kind::Cube => 3,
            },
            surface_array: self.arrayed,
            surface_format: self.format as u64,
            tile_mode: f.tile_mode,
            surface_horizontal_alignment: f.halign,
            surface_vertical_alignment: f.valign,
            width: f.width,
            height: f.height,
            depth: match self.kind {
                Kind::Cube => (self.layers / 6 - 1) as u64,
                _ => f.depth,
            },
            surface_pitch: f.surface_pitch,
            surface_qpitch: f.surface_qpitch,
            mip_count_lod: (self.levels - 1) as u64,
            shader_channel_select_red: 4,
            shader_channel_select_green: 5,
            shader_channel_select_blue: 6,
            shader_channel_select_alpha: 7,
            surface_base_address: BASE + IMAGE,
            ..Default::default()
        }
    }
}

/// Random register bits for a channel of `fmt`, in a range the codec stores meaningfully.
fn random_value(r: &mut Rng, fmt: SurfaceFormat) -> u32 {
    match fmt.numeric_class() {
        NumericClass::Float => ((r.below(4001) as f32 - 1500.0) / 1000.0).to_bits(),
        NumericClass::Uint => r.next_u64() as u32 >> r.below(32),
        NumericClass::Sint => (r.next_u64() as i32 >> r.below(32)) as u32,
    }
}

/// Fills the image with random texels through the layout; returns the reference copy.
fn fill(bed: &Bed, case: &Case, layout: &ImageLayout, r: &mut Rng) -> RefImage {
    let fmt = case.format;
    let n = fmt.bytes_per_texel() as usize;
    let mut levels = Vec::new();
    for l in 0..case.levels {
        let e = layout.level_extent(l);
        let depth = match case.kind {
            Kind::D3 => e[2],
            _ => case.layers,
        };
        let mut texels = Vec::new();
        for z in 0..depth {
            for y in 0..e[1] {
                for x in 0..e[0] {
                    let v = [0; 4].map(|_: u32| random_value(r, fmt));
                    let mut raw = [0u8; 16];
                    fmt.encode(v, &mut raw);
                    let a = BASE + IMAGE + layout.texel_address(x, y, z, l);
                    bed.mem.write(a, &raw[..n]).unwrap();
                    texels.push(fmt.decode(&raw));
                }
            }
        }
        levels.push(RefLevel {
            w: e[0],
            h: e[1],
            n: depth,
            texels,
        });
    }
    RefImage {
        kind: match case.kind {
            Kind::D1 => RefKind::D1,
            Kind::D2 => RefKind::D2,
            Kind::D3 => RefKind::D3,
            Kind::Cube => RefKind::Cube,
        },
        arrayed: case.arrayed,
        integer: fmt.numeric_class() != NumericClass::Float,
        present: [0u8, 1, 2, 3].map(|c| fmt.has_component(c)),
        levels,
    }
}

const SAMPLED: &[SurfaceFormat] = &[
    SurfaceFormat::R8G8B8A8_UNORM,
    SurfaceFormat::R8G8B8A8_UNORM_SRGB,
    SurfaceFormat::B8G8R8A8_UNORM,
    SurfaceFormat::R16G16B16A16_FLOAT,
    SurfaceFormat::R32_FLOAT,
    SurfaceFormat::R32G32B32A32_FLOAT,
    SurfaceFormat::R11G11B10_FLOAT,
    SurfaceFormat::R10G10B10A2_UNORM,
    SurfaceFormat::B5G6R5_UNORM,
    SurfaceFormat::B4G4R4A4_UNORM,
    SurfaceFormat::R8_SNORM,
    SurfaceFormat::R16G16_UNORM,
    SurfaceFormat::R9G9B9E5_SHAREDEXP,
    SurfaceFormat::R32G32B32A32_UINT,
    SurfaceFormat::R16_SINT,
    SurfaceFormat::R8G8_UINT,
];

fn random_case(r: &mut Rng) -> Case {
    let kind = r.pick(&[Kind::D1, Kind::D2, Kind::D2, Kind::D3, Kind::Cube]);
    let arrayed = !matches!(kind, Kind::D3) && r.chance(1, 2);
    let side = |r: &mut Rng| 1 + r.below(13) as u32;
    let extent = match kind {
        Kind::D1 => [side(r), 1, 1],
        Kind::D2 => [side(r), side(r), 1],
        Kind::Cube => {
            let s = side(r);
            [s, s, 1]
        }
        Kind::D3 => [side(r), side(r), 1 + r.below(6) as u32],
    };
    let max_levels = 32 - extent[0].max(extent[1]).max(extent[2]).leading_zeros();
    let layers = match (kind, arrayed) {
        (Kind::Cube, true) => 12,
        (Kind::Cube, false) => 6,
        (Kind::D3, _) | (_, false) => 1,
        _ => 1 + r.below(4) as u32,
    };
    Case {
        kind,
        arrayed,
        format: r.pick(SAMPLED),
        tiling: r.pick(&[Tiling::Linear, Tiling::TileY]),
        extent,
        levels: 1 + r.below(max_levels as u64) as u32,
        layers,
    }
}

const WRAPS: [(u64, RefWrap); 5] = [
    (0, RefWrap::Repeat),
    (1, RefWrap::MirroredRepeat),
    (2, RefWrap::ClampToEdge),
    (4, RefWrap::ClampToBorder),
    (5, RefWrap::MirrorClampToEdge),
];

/// A random sampler: (SAMPLER_STATE, border colour state, reference sampler).
fn random_sampler(r: &mut Rng, case: &Case) -> (Vec<u32>, Vec<u32>, RefSampler) {
    let unnormalized = matches!(case.kind, Kind::D1 | Kind::D2) && !case.arrayed && r.chance(1, 5);
    let mag_linear = r.chance(1, 2);
    let min_linear = r.chance(1, 2);
    let mip = if unnormalized {
        0
    } else {
        r.pick(&[0u64, 1, 3])
    };
    let mut w = [0; 3].map(|_: u32| r.pick(&WRAPS));
    if unnormalized {
        for x in w.iter_mut() {
            *x = r.pick(&[WRAPS[2], WRAPS[3]]);
        }
    }
    let bias = r.below(1025) as i64 - 512; // s4.8 in [-2, 2]
    let min_lod = r.below(3 * 256);
    let max_lod = min_lod + r.below(5 * 256);
    let integer = case.format.numeric_class() != NumericClass::Float;
    let border: [u32; 4] = match (r.below(3), integer) {
        (0, false) => [0, 0, 0, 0],
        (1, false) => [0, 0, 0, 1.0f32.to_bits()],
        (2, false) => [1.0f32.to_bits(); 4],
        (0, true) => [0; 4],
        (1, true) => [0, 0, 0, 1],
        _ => [1; 4],
    };
    let st = SamplerState {
        min_mode_filter: min_linear as u64,
        mag_mode_filter: mag_linear as u64,
        mip_mode_filter: mip,
        texture_lod_bias: (bias as u64) & 0x1FFF,
        min_lod,
        max_lod,
        tcx_address_control_mode: w[0].0,
        tcy_address_control_mode: w[1].0,
        tcz_address_control_mode: w[2].0,
        non_normalized_coordinate_enable: unnormalized,
        border_color_pointer: BORDER,
        ..Default::default()
    };
    let b = SamplerBorderColorState {
        border_color_32bit_red: border[0] as u64,
        border_color_32bit_green: border[1] as u64,
        border_color_32bit_blue: border[2] as u64,
        border_color_32bit_alpha: border[3] as u64,
        ..Default::default()
    };
    let rs = RefSampler {
        mag_linear,
        min_linear,
        mip_linear: match mip {
            0 => None,
            1 => Some(false),
            _ => Some(true),
        },
        wrap: [w[0].1, w[1].1, w[2].1],
        bias: bias as f64 / 256.0,
        min_lod: min_lod as f64 / 256.0,
        max_lod: max_lod as f64 / 256.0,
        unnormalized,
        border,
    };
    (st.to_dwords(), b.to_dwords(), rs)
}

/// Whether two results agree: integers exactly, floats within 4 ULP or 1e-6 (the two
/// sides sum the same weighted texels in different orders); returns the ULP distance.
fn ulps(a: u32, b: u32, float: bool) -> Option<u32> {
    if !float {
        return (a == b).then_some(0);
    }
    let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
    if fa.is_nan() && fb.is_nan() || a == b {
        return Some(0);
    }
    let key = |x: u32| if x >> 31 == 1 { !x } else { x | 0x8000_0000 };
    let d = key(a).abs_diff(key(b));
    ((fa - fb).abs() <= 1e-6 || d <= 4).then_some(d)
}

fn pack_params(params: &[[u32; 16]], simd: usize, header: Option<u32>) -> Vec<u8> {
    let mut p = Vec::new();
    if let Some(dw2) = header {
        let mut h = [0u8; 32];
        h[8..12].copy_from_slice(&dw2.to_le_bytes());
        p.extend_from_slice(&h);
    }
    for lanes in params {
        for v in &lanes[..simd] {
            p.extend_from_slice(&v.to_le_bytes());
        }
    }
    p
}

fn lane_value(resp: &[u8], k: usize, simd: usize, lane: usize) -> u32 {
    let at = k * simd * 4 + 4 * lane;
    u32::from_le_bytes(resp[at..at + 4].try_into().unwrap())
}

/// Runs `cases` random cases; returns the largest float ULP distance seen.
fn sweep(seed: u64, cases: u32) -> u32 {
    let mut r = Rng::new(seed);
    let mut worst = 0;
    for case_no in 0..cases {
        let case = random_case(&mut r);
        let layout = ImageLayout::new(&case.desc()).unwrap();
        let bed = Bed::new(layout.size);
        let img = fill(&bed, &case, &layout, &mut r);
        bed.write_dwords(SS, &case.surface_state(&layout).to_dwords());
        let (st, border, rs) = random_sampler(&mut r, &case);
        bed.write_dwords(SAMPLER, &st);
        bed.write_dwords(BORDER, &border);
        let simd = if r.chance(1, 2) { 16 } else { 8 };
        let sm = if simd == 16 {
            SamplerSimd::Simd16
        } else {
            SamplerSimd::Simd8
        };
        let float = case.format.numeric_class() == NumericClass::Float;
        let is_2d = matches!(case.kind, Kind::D2);
        let msg = match r.below(14) {
            0..=5 => SamplerMsgType::SampleL,
            6 | 7 => SamplerMsgType::Ld,
            8 if is_2d => SamplerMsgType::Gather4,
            9 if is_2d => SamplerMsgType::Gather4Po,
            10 => SamplerMsgType::SampleLz,
            11 => SamplerMsgType::LdLz,
            _ => SamplerMsgType::Resinfo,
        };
        let offsets_ok = !matches!(case.kind, Kind::Cube) && !rs.unnormalized;
        let offsets: [i8; 3] = if offsets_ok && msg != SamplerMsgType::Gather4Po && r.chance(1, 3) {
            [0; 3].map(|_: i8| r.below(16) as i8 - 8)
        } else {
            [0; 3]
        };
        let comp = r.below(4) as u8;
        let header = (msg.needs_header() || offsets != [0; 3]).then(|| {
            SamplerHeader {
                offsets,
                channel_disable: 0,
                gather_component: comp,
            }
            .to_dw2()
        });
        let span =
            |r: &mut Rng, lo: f32, hi: f32| lo + (hi - lo) * (r.below(1 << 16) as f32 / 65536.0);
        let mut params = vec![[0u32; 16]; 5];
        let mut expect = [[0u32; 4]; 16];
        for l in 0..simd {
            match msg {
                SamplerMsgType::SampleL | SamplerMsgType::SampleLz => {
                    let lod = span(&mut r, -1.0, case.levels as f32 + 0.5);
                    let lz = msg == SamplerMsgType::SampleLz;
                    let mut c = [0f32; 4];
                    for (i, v) in c.iter_mut().enumerate() {
                        *v = if rs.unnormalized {
                            span(&mut r, -3.0, case.extent[i.min(1)] as f32 + 3.0)
                        } else {
                            span(&mut r, -1.25, 2.25)
                        };
                    }
                    if case.arrayed {
                        let ai = match case.kind {
                            Kind::D1 => 1,
                            Kind::D2 => 2,
                            _ => 3,
                        };
                        c[ai] = span(&mut r, -1.0, case.layers as f32 + 1.0);
                    }
                    if matches!(case.kind, Kind::Cube) {
                        for v in c.iter_mut().take(3) {
                            *v = span(&mut r, -1.0, 1.0);
                        }
                    }
                    // sample_l: lod, u, v, r, ai; sample_lz: u, v, r, ai.
                    let first = if lz { 0 } else { 1 };
                    params[0][l] = lod.to_bits();
                    for i in 0..4 {
                        params[first + i][l] = c[i].to_bits();
                    }
                    let lod = if rs.unnormalized || lz { 0.0 } else { lod };
                    if rs.unnormalized && !lz {
                        params[0][l] = 0;
                    }
                    expect[l] = img.sample(&rs, c, lod, offsets.map(|v| v as i32));
                }
                SamplerMsgType::Ld => {
                    let lod = r.below(case.levels as u64 + 1) as i32;
                    let c = [0; 3].map(|_: i32| r.below(16) as i32 - 2);
                    params[0][l] = c[0] as u32;
                    params[1][l] = c[1] as u32;
                    params[2][l] = lod as u32;
                    params[3][l] = c[2] as u32;
                    expect[l] = img.fetch(c, lod, offsets.map(|v| v as i32));
                }
                SamplerMsgType::LdLz => {
                    let c = [0; 3].map(|_: i32| r.below(16) as i32 - 2);
                    for i in 0..3 {
                        params[i][l] = c[i] as u32;
                    }
                    expect[l] = img.fetch(c, 0, offsets.map(|v| v as i32));
                }
                SamplerMsgType::Gather4Po => {
                    let c = [
                        span(&mut r, -0.5, 1.5),
                        span(&mut r, -0.5, 1.5),
                        span(&mut r, -1.0, case.layers as f32),
                        0.0,
                    ];
                    // Per-lane offsets, 6-bit signed on Gen9.
                    let off = [r.below(64) as i32 - 32, r.below(64) as i32 - 32];
                    params[0][l] = c[0].to_bits();
                    params[1][l] = c[1].to_bits();
                    params[2][l] = off[0] as u32;
                    params[3][l] = off[1] as u32;
                    params[4][l] = c[2].to_bits();
                    expect[l] = img.gather(&rs, c, comp as usize, off);
                }
                SamplerMsgType::Gather4 => {
                    let c = [
                        span(&mut r, -0.5, 1.5),
                        span(&mut r, -0.5, 1.5),
                        span(&mut r, -1.0, case.layers as f32),
                        0.0,
                    ];
                    for i in 0..3 {
                        params[i][l] = c[i].to_bits();
                    }
                    expect[l] = img.gather(
                        &rs,
                        c,
                        comp as usize,
                        [offsets[0] as i32, offsets[1] as i32],
                    );
                }
                _ => {
                    let lod = r.below(case.levels as u64 + 1) as u32;
                    params[0][l] = lod;
                    expect[l] = if lod >= case.levels {
                        [0, 0, 0, case.levels]
                    } else {
                        let e = layout.level_extent(lod);
                        match (case.kind, case.arrayed) {
                            (Kind::D1, a) => {
                                [e[0], if a { case.layers } else { 0 }, 0, case.levels]
                            }
                            (Kind::D2, a) => {
                                [e[0], e[1], if a { case.layers } else { 0 }, case.levels]
                            }
                            (Kind::Cube, a) => {
                                [e[0], e[1], if a { case.layers / 6 } else { 0 }, case.levels]
                            }
                            (Kind::D3, _) => [e[0], e[1], e[2], case.levels],
                        }
                    };
                }
            }
        }
        let nparams = match msg {
            SamplerMsgType::SampleL | SamplerMsgType::Gather4Po => 5,
            SamplerMsgType::Ld | SamplerMsgType::SampleLz => 4,
            SamplerMsgType::Gather4 | SamplerMsgType::LdLz => 3,
            _ => 1,
        };
        let payload = pack_params(&params[..nparams], simd, header);
        let d = SamplerDesc::new(0, 0, msg, sm, header.is_some(), nparams as u32, 4);
        let exec_mask = if simd == 16 { 0xFFFF } else { 0xFF };
        let resp = bed.send(
            SFID_SAMPLER,
            d.encode(),
            exec_mask,
            &payload,
            d.rlen as usize,
        );
        let float_result = float && !matches!(msg, SamplerMsgType::Resinfo);
        for (l, want) in expect.iter().enumerate().take(simd) {
            for (c, &w) in want.iter().enumerate() {
                let got = lane_value(&resp, c, simd, l);
                match ulps(got, w, float_result) {
                    Some(u) => worst = worst.max(u),
                    None => panic!(
                        "seed {seed} case {case_no}: {case:?}\n{msg} lane {l} channel {c}: sim {got:#x} ({}) reference {w:#x} ({})\nsampler {rs:?}\noffsets {offsets:?} params {:?}",
                        f32::from_bits(got),
                        f32::from_bits(w),
                        params.iter().map(|p| p[l]).collect::<Vec<_>>()
                    ),
                }
            }
        }
    }
    worst
}

fn sweep_size() -> (u32, u64) {
    match std::env::var("FERRITE_SAMPLER_SWEEP") {
        Ok(v) => {
            let mut it = v.split(':');
            let n = it.next().and_then(|s| s.parse().ok()).unwrap_or(300);
            let seed = it.next().and_then(|s| s.parse().ok()).unwrap_or(0x5A4D);
            (n, seed)
        }
        Err(_) => (300, 0x5A4D),
    }
}

#[test]
fn sampler_matches_the_reference_on_a_random_sweep() {
    let (cases, seed) = sweep_size();
    let worst = sweep(seed, cases);
    eprintln!("sampler sweep: {cases} cases, seed {seed:#x}, worst float difference {worst} ULP");
}

/// Typed writes then reads of random texels through a tiled and a linear surface of the
/// same image give the same values, and the tiled one stores them where the layout says.
#[test]
fn typed_messages_on_tiled_and_linear_surfaces_agree() {
    for fmt in [
        SurfaceFormat::R32_UINT,
        SurfaceFormat::R8G8B8A8_UINT,
        SurfaceFormat::R16G16B16A16_FLOAT,
        SurfaceFormat::R32G32B32A32_SINT,
    ] {
        for (kind, extent, layers) in [
            (Kind::D2, [13, 9, 1], 3),
            (Kind::D3, [7, 5, 4], 1),
            (Kind::D1, [37, 1, 1], 2),
        ] {
            let mut results = Vec::new();
            for tiling in [Tiling::Linear, Tiling::TileY] {
                let case = Case {
                    kind,
                    arrayed: layers > 1,
                    format: fmt,
                    tiling,
                    extent,
                    levels: 2,
                    layers,
                };
                let layout = ImageLayout::new(&case.desc()).unwrap();
                let bed = Bed::new(layout.size);
                let mut ss = case.surface_state(&layout);
                let mut seen = Vec::new();
                // The same texels for both tilings.
                let mut rr = Rng::new(0x7117);
                for level in 0..2u32 {
                    ss.mip_count_lod = level as u64;
                    bed.write_dwords(SS, &ss.to_dwords());
                    let e = layout.level_extent(level);
                    let zs = if matches!(kind, Kind::D3) {
                        e[2]
                    } else {
                        layers
                    };
                    // Eight lanes per message: texels in raster order, plus one outside.
                    let mut coords: Vec<[u32; 3]> = Vec::new();
                    for z in 0..zs {
                        for y in 0..e[1] {
                            for x in 0..e[0] {
                                coords.push([x, y, z]);
                            }
                        }
                    }
                    coords.push([e[0], 0, 0]);
                    for chunk in coords.chunks(8) {
                        let mut u = [0u32; 8];
                        let mut v = [0u32; 8];
                        let mut w = [0u32; 8];
                        for (l, c) in chunk.iter().enumerate() {
                            u[l] = c[0];
                            match kind {
                                Kind::D1 => v[l] = c[2],
                                _ => {
                                    v[l] = c[1];
                                    w[l] = c[2];
                                }
                            }
                        }
                        let data: Vec<[u32; 8]> = (0..4)
                            .map(|_| [0; 8].map(|_: u32| random_value(&mut rr, fmt)))
                            .collect();
                        let mask = (1u32 << chunk.len()) - 1;
                        let mut payload = Vec::new();
                        for reg in [u, v, w].iter().chain(data.iter()) {
                            for x in reg {
                                payload.extend_from_slice(&x.to_le_bytes());
                            }
                        }
                        // typed write XYZW (mlen 3 + 4), SIMD8 slot group 1, BTI 0.
                        let wdesc = (7 << 25) | (0x0D << 14) | (1 << 12);
                        bed.send(SFID_DC1, wdesc, mask, &payload, 0);
                        let rdesc = (3 << 25) | (4 << 20) | (0x05 << 14) | (1 << 12);
                        let resp = bed.send(SFID_DC1, rdesc, mask, &payload[..96], 4);
                        for (l, c) in chunk.iter().enumerate() {
                            let got: [u32; 4] = [0, 1, 2, 3].map(|k| lane_value(&resp, k, 8, l));
                            let inside = c[0] < e[0];
                            if inside {
                                let mut raw = [0u8; 16];
                                fmt.encode([0, 1, 2, 3].map(|k| data[k][l]), &mut raw);
                                assert_eq!(
                                    got,
                                    fmt.decode(&raw),
                                    "{case:?} level {level} texel {c:?}"
                                );
                                let mut stored = [0u8; 16];
                                let n = fmt.bytes_per_texel() as usize;
                                bed.mem
                                    .read(
                                        BASE + IMAGE
                                            + layout.texel_address(c[0], c[1], c[2], level),
                                        &mut stored[..n],
                                    )
                                    .unwrap();
                                assert_eq!(
                                    stored, raw,
                                    "{case:?}: texel {c:?} stored where the layout says"
                                );
                            } else {
                                assert_eq!(got, [0; 4], "{case:?}: outside texel {c:?} reads 0");
                            }
                            seen.push(got);
                        }
                    }
                }
                results.push(seen);
            }
            assert_eq!(
                results[0], results[1],
                "{fmt} {kind:?}: tiled and linear differ"
            );
        }
    }
}

/// A surface the typed messages cannot read natively is an error, not a silent conversion.
#[test]
fn typed_read_of_an_unreadable_format_is_an_error() {
    let case = Case {
        kind: Kind::D2,
        arrayed: false,
        format: SurfaceFormat::R8G8B8A8_UNORM,
        tiling: Tiling::TileY,
        extent: [4, 4, 1],
        levels: 1,
        layers: 1,
    };
    let layout = ImageLayout::new(&case.desc()).unwrap();
    let bed = Bed::new(layout.size);
    bed.write_dwords(SS, &case.surface_state(&layout).to_dwords());
    let mut cache = [None; 253];
    let mut port = Port::new(&bed.mem, &bed.ctx, &mut cache, &mut []);
    let payload = [0u8; 64];
    let mut resp = [0u8; 32];
    let rdesc = (2 << 25) | (1 << 20) | (0x05 << 14) | (1 << 12) | (0xE << 8);
    let e = port
        .send(Message {
            sfid: SFID_DC1,
            desc: rdesc,
            ex_desc: SFID_DC1 as u32,
            exec_size: 8,
            exec_mask: 0xFF,
            payload: &payload,
            response: &mut resp,
        })
        .unwrap_err();
    assert!(e.contains("R8G8B8A8_UNORM"), "{e}");
}

/// Typed atomics (ADD with return) on a Y-tiled R32_UINT 2-D array: each lane adds to its
/// texel twice; the returned old values and the final memory follow the layout, and lanes
/// outside the image return 0 and change nothing.
#[test]
fn typed_atomics_on_a_tiled_array() {
    let case = Case {
        kind: Kind::D2,
        arrayed: true,
        format: SurfaceFormat::R32_UINT,
        tiling: Tiling::TileY,
        extent: [5, 3, 1],
        levels: 1,
        layers: 2,
    };
    let layout = ImageLayout::new(&case.desc()).unwrap();
    let bed = Bed::new(layout.size);
    bed.write_dwords(SS, &case.surface_state(&layout).to_dwords());
    // Lanes: (x, y, layer) = (l % 5, l / 5 % 3, 1), lane 7 outside (x = 5).
    let coords: Vec<[u32; 3]> = (0..8u32)
        .map(|l| {
            if l == 7 {
                [5, 0, 1]
            } else {
                [l % 5, l / 5 % 3, 1]
            }
        })
        .collect();
    let mut payload = Vec::new();
    for k in 0..3 {
        for c in &coords {
            payload.extend_from_slice(&c[k].to_le_bytes());
        }
    }
    for l in 0..8u32 {
        payload.extend_from_slice(&(10 + l).to_le_bytes());
    }
    // typed atomic ADD (7) with return (bit 5), slot group 1: mlen 4, rlen 1.
    let desc = (4 << 25) | (1 << 20) | (0x06 << 14) | ((0x20 | 7) << 8);
    let first = bed.send(SFID_DC1, desc, 0xFF, &payload, 1);
    let second = bed.send(SFID_DC1, desc, 0xFF, &payload, 1);
    for (l, c) in coords.iter().enumerate() {
        let (a, b) = (lane_value(&first, 0, 8, l), lane_value(&second, 0, 8, l));
        if l == 7 {
            assert_eq!((a, b), (0, 0), "outside lane returns 0");
            continue;
        }
        assert_eq!((a, b), (0, 10 + l as u32), "lane {l} old values");
        let at = BASE + IMAGE + layout.texel_address(c[0], c[1], c[2], 0);
        assert_eq!(
            bed.mem.read_u32(at).unwrap(),
            2 * (10 + l as u32),
            "texel {c:?}"
        );
    }
    // Layer 0 is untouched.
    for y in 0..3 {
        for x in 0..5 {
            let at = BASE + IMAGE + layout.texel_address(x, y, 0, 0);
            assert_eq!(bed.mem.read_u32(at).unwrap(), 0);
        }
    }
}

/// The face-plane-to-direction table inverts the spec's face selection table: every point
/// of every face maps back to itself, and points just beyond an edge land on the face
/// whose shared edge is nearest (the direction's other major axis).
#[test]
fn cube_face_direction_inverts_face_selection() {
    use super::{cube_face, face_direction};
    let mut r = Rng::new(0xC0BE);
    for face in 0..6 {
        for _ in 0..200 {
            let sc = r.below(1999) as f64 / 1000.0 - 0.999;
            let tc = r.below(1999) as f64 / 1000.0 - 0.999;
            let d = face_direction(face, sc, tc);
            let (f, s, t) = cube_face(d[0], d[1], d[2]);
            assert_eq!(f, face, "({sc}, {tc}) on face {face}");
            assert!((s - (sc + 1.0) / 2.0).abs() < 1e-12 && (t - (tc + 1.0) / 2.0).abs() < 1e-12);
            // Just beyond the right edge (sc > 1): another face, at its own edge.
            let d = face_direction(face, 1.01, tc * 0.9);
            let (f2, s2, t2) = cube_face(d[0], d[1], d[2]);
            assert_ne!(f2, face);
            let edge = s2.min(1.0 - s2).min(t2).min(1.0 - t2);
            assert!(
                edge < 0.01,
                "face {face} -> {f2} at ({s2}, {t2}) is not at an edge"
            );
        }
    }
}

/// The surface's shader channel selects reorder what ld returns (ZERO, ONE and any
/// channel), and the header's channel mask drops channels from the response (R and B
/// only: two blocks).
#[test]
fn channel_selects_and_the_response_mask() {
    let case = Case {
        kind: Kind::D2,
        arrayed: false,
        format: SurfaceFormat::R8G8B8A8_UINT,
        tiling: Tiling::TileY,
        extent: [2, 2, 1],
        levels: 1,
        layers: 1,
    };
    let layout = ImageLayout::new(&case.desc()).unwrap();
    let bed = Bed::new(layout.size);
    for y in 0..2u32 {
        for x in 0..2u32 {
            let v = 10 * (x + 2 * y) as u8;
            let a = BASE + IMAGE + layout.texel_address(x, y, 0, 0);
            bed.mem.write(a, &[v, v + 1, v + 2, v + 3]).unwrap();
        }
    }
    let mut ss = case.surface_state(&layout);
    // R <- BLUE, G <- ONE, B <- ZERO, A <- RED.
    ss.shader_channel_select_red = 6;
    ss.shader_channel_select_green = 1;
    ss.shader_channel_select_blue = 0;
    ss.shader_channel_select_alpha = 4;
    bed.write_dwords(SS, &ss.to_dwords());
    let mut u = [0u32; 16];
    let mut v = [0u32; 16];
    for l in 0..4 {
        u[l] = l as u32 % 2;
        v[l] = l as u32 / 2;
    }
    let params = [u, v, [0; 16]];
    let d = SamplerDesc::new(0, 0, SamplerMsgType::Ld, SamplerSimd::Simd8, false, 3, 4);
    let resp = bed.send(
        SFID_SAMPLER,
        d.encode(),
        0xF,
        &pack_params(&params, 8, None),
        4,
    );
    for l in 0..4 {
        let t = 10 * l as u32;
        let got: [u32; 4] = [0, 1, 2, 3].map(|k| lane_value(&resp, k, 8, l));
        assert_eq!(got, [t + 2, 1, 0, t], "lane {l}");
    }
    // Header mask 0b1010: G and A not returned; R and B in blocks 0 and 1.
    let dw2 = SamplerHeader {
        channel_disable: 0b1010,
        ..Default::default()
    }
    .to_dw2();
    let d = SamplerDesc::new(0, 0, SamplerMsgType::Ld, SamplerSimd::Simd8, true, 3, 2);
    let resp = bed.send(
        SFID_SAMPLER,
        d.encode(),
        0xF,
        &pack_params(&params, 8, Some(dw2)),
        2,
    );
    for l in 0..4 {
        let t = 10 * l as u32;
        assert_eq!(
            [lane_value(&resp, 0, 8, l), lane_value(&resp, 1, 8, l)],
            [t + 2, 0],
            "lane {l}"
        );
    }
}
