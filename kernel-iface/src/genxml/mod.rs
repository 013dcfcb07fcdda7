//! Gen9 command and state layouts, generated at build time from Mesa's genxml description
//! (`kernel-iface/genxml/gen9.xml`, Mesa 23.2.1, MIT; see `genxml/SOURCES.md`).
//!
//! Every definition is one Rust struct with a public field per genxml field, `Default` giving
//! the XML defaults (opcode fields, `DWord Length`), `pack`/`to_dwords` for the driver and
//! `unpack` for the simulator, and a `Display` that lists the fields. Field values follow
//! genxml: `uint`/`int`/`bool` fields are shifted to bit 0; `address`/`offset` fields keep
//! their bit positions (a 64-byte-aligned kernel offset is stored as the offset itself).
//! Variable-length groups (MI_LOAD_REGISTER_IMM's extra register/value pairs) are not fields:
//! their users walk them with [`get_bits`].

#![allow(clippy::all)]

include!(concat!(env!("OUT_DIR"), "/genxml_gen9.rs"));

/// RENDER_SURFACE_STATE SurfaceType of a buffer and of a null surface.
pub const SURFTYPE_BUFFER: u64 = 4;
pub const SURFTYPE_NULL: u64 = 7;
/// SurfaceFormat RAW, used for storage and uniform buffers.
pub const SURFACE_FORMAT_RAW: u64 = 0x1FF;

/// The RENDER_SURFACE_STATE of a RAW buffer of `size` bytes at `address` (docs/gen9.md 6.1, as
/// anv writes it): the element count is n = align4(size) + (align4(size) - size), so a shader
/// can recover the byte size as (n & !3) - (n & 3); the data port bounds-checks against n.
/// A zero size gives a NULL surface (every access is out of bounds).
pub fn raw_buffer_surface(address: u64, size: u64) -> RenderSurfaceState {
    if size == 0 {
        return RenderSurfaceState {
            surface_type: SURFTYPE_NULL,
            surface_format: SURFACE_FORMAT_RAW,
            ..Default::default()
        };
    }
    let aligned = (size + 3) & !3;
    let last = aligned + (aligned - size) - 1;
    RenderSurfaceState {
        surface_type: SURFTYPE_BUFFER,
        surface_format: SURFACE_FORMAT_RAW,
        surface_vertical_alignment: 1,
        surface_horizontal_alignment: 1,
        mocs: 4,
        width: last & 0x7F,
        height: (last >> 7) & 0x3FFF,
        depth: (last >> 21) & 0x7FF,
        shader_channel_select_alpha: 1,
        surface_base_address: address,
        ..Default::default()
    }
}

/// The element count of a SURFTYPE_BUFFER surface: Width, Height and Depth hold n - 1.
pub fn buffer_surface_elements(ss: &RenderSurfaceState) -> u64 {
    (ss.width | (ss.height << 7) | (ss.depth << 21)) + 1
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Bits `start..=end` (absolute bit numbers, dword N = bits 32N..32N+31) of `dw`, shifted to
/// bit 0. Dwords beyond `dw` read as 0. At most 64 bits.
pub fn get_bits(dw: &[u32], start: u32, end: u32) -> u64 {
    let mut v = 0u64;
    let mut bit = start;
    while bit <= end {
        let d = (bit / 32) as usize;
        let lo = bit % 32;
        let hi = (end - (d as u32) * 32).min(31);
        let word = dw.get(d).copied().unwrap_or(0) as u64;
        let chunk = (word >> lo) & mask(hi - lo + 1);
        v |= chunk << (bit - start);
        bit = (d as u32 + 1) * 32;
    }
    v
}

/// Sets bits `start..=end` of `dw` to the low bits of `value` (OR-ing into what is there).
/// Dwords beyond `dw` are ignored.
pub fn set_bits(dw: &mut [u32], start: u32, end: u32, value: u64) {
    let value = value & mask(end - start + 1);
    let mut bit = start;
    while bit <= end {
        let d = (bit / 32) as usize;
        let lo = bit % 32;
        let hi = (end - (d as u32) * 32).min(31);
        let chunk = (value >> (bit - start)) & mask(hi - lo + 1);
        if let Some(w) = dw.get_mut(d) {
            *w |= (chunk as u32) << lo;
        }
        bit = (d as u32 + 1) * 32;
    }
}

/// An `address`/`offset` field: bits `start..=end` counted from the dword holding `start`,
/// NOT shifted (the value is a byte address whose low bits are implied zero).
pub fn get_address(dw: &[u32], start: u32, end: u32) -> u64 {
    let base = start / 32 * 32;
    get_bits(dw, start, end) << (start - base)
}

/// Stores an `address`/`offset` field (see [`get_address`]); bits of `value` outside the
/// field are dropped.
pub fn set_address(dw: &mut [u32], start: u32, end: u32, value: u64) {
    let base = start / 32 * 32;
    set_bits(dw, start, end, value >> (start - base));
}

/// Sign-extends the low `width` bits of `v`.
pub fn sign_extend(v: u64, width: u32) -> i64 {
    if width >= 64 {
        v as i64
    } else {
        ((v << (64 - width)) as i64) >> (64 - width)
    }
}

/// One decoded line of a batch dump.
pub fn describe(dw: &[u32]) -> String {
    match Command::unpack(dw) {
        Some(c) => c.to_string(),
        None => format!("unknown command {:#010x}", dw.first().copied().unwrap_or(0)),
    }
}
