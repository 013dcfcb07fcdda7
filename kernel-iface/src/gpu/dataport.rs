//! The shared functions an EU thread talks to with SEND: the data port (HDC, SFIDs 10 and
//! 12), the message gateway (SFID 3, barriers) and the thread spawner (SFID 7, end of
//! thread). Descriptor and payload layouts: docs/gen9.md section 4.
//!
//! Buffer surfaces come from the binding table (RENDER_SURFACE_STATE, section 6) and are
//! bounds-checked at dword granularity: reads outside return 0, writes and atomics outside
//! do nothing (atomics return 0). BTI 254 is the group's shared local memory, 253/255 are
//! stateless (A32 relative to General State Base, not bounds-checked); A64 messages take
//! 64-bit addresses. All memory goes through [`GpuMemory`] (PPGTT scratch-page semantics).

use crate::genxml::{
    buffer_surface_elements, BindingTableState, RenderSurfaceState, SURFTYPE_BUFFER, SURFTYPE_NULL,
};
use crate::gpu::eu::{Message, MessagePort, SendOutcome};
use crate::gpu::memory::{GpuMemory, Span};
use crate::gpu::surface::{ImageKind, ImageSurface, SURFTYPE_1D, SURFTYPE_CUBE};
use ferrite_isa::surface_format::SurfaceFormat;

/// Shared function ids (SEND ex_desc bits 3:0).
pub const SFID_SAMPLER: u8 = ferrite_isa::sampler_msg::SFID_SAMPLER;
pub const SFID_GATEWAY: u8 = 3;
pub const SFID_THREAD_SPAWNER: u8 = 7;
pub const SFID_DC0: u8 = 10;
pub const SFID_DC1: u8 = 12;

/// Special binding-table indices.
pub const BTI_SLM: u32 = 254;
pub const BTI_STATELESS: u32 = 255;
pub const BTI_STATELESS_NC: u32 = 253;

/// A surface as the data port sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// A buffer: `size` bytes at GPU address `base`; typed messages see elements of
    /// `stride` bytes in `format`.
    Buffer {
        base: u64,
        size: u64,
        stride: u64,
        format: u32,
    },
    /// A 1-D/2-D/3-D/cube image, linear or tiled (typed messages and the sampler).
    Image(ImageSurface),
    /// NULL surface: every access is out of bounds.
    Null,
    /// Not bounds-checked: A32 offsets from `base` (stateless, BTI 253/255).
    Stateless { base: u64 },
}

/// Where the binding table and surface states of a dispatch live.
#[derive(Debug, Clone, Copy)]
pub struct SurfaceContext {
    pub surface_state_base: u64,
    pub binding_table: u64,
    pub general_state_base: u64,
    /// Dynamic State Base Address and the IDD's SamplerStatePointer (an offset from it):
    /// where the sampler finds SAMPLER_STATE and border colours.
    pub dynamic_state_base: u64,
    pub sampler_state_pointer: u64,
}

impl SurfaceContext {
    /// Resolves binding-table index `bti` (0..=252) to a surface.
    pub fn resolve(&self, mem: &GpuMemory, bti: u32) -> Result<Surface, String> {
        let entry_addr = self.surface_state_base + self.binding_table + 4 * bti as u64;
        let entry = mem
            .read_u32(entry_addr)
            .map_err(|e| format!("binding table entry {bti}: {e}"))?;
        let bt = BindingTableState::unpack(&[entry]);
        let ss_addr = self.surface_state_base + bt.surface_state_pointer;
        let mut dw = [0u32; 16];
        let mut bytes = [0u8; 64];
        mem.read(ss_addr, &mut bytes)
            .map_err(|e| format!("surface state of BTI {bti}: {e}"))?;
        for (i, d) in dw.iter_mut().enumerate() {
            *d = u32::from_le_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap_or_default());
        }
        let ss = RenderSurfaceState::unpack(&dw);
        match ss.surface_type {
            SURFTYPE_NULL => Ok(Surface::Null),
            SURFTYPE_BUFFER => {
                let n = buffer_surface_elements(&ss);
                let stride = ss.surface_pitch + 1;
                Ok(Surface::Buffer {
                    base: ss.surface_base_address,
                    size: n * stride,
                    stride,
                    format: ss.surface_format as u32,
                })
            }
            SURFTYPE_1D..=SURFTYPE_CUBE => ImageSurface::decode(&ss)
                .map(Surface::Image)
                .map_err(|e| format!("BTI {bti}: {e}")),
            t => Err(format!(
                "BTI {bti}: surface type {t} is not supported by untyped/scattered messages"
            )),
        }
    }
}

/// Data-port state of one EU thread (rebuilt for every `run`; cheap).
pub struct Port<'a> {
    pub mem: &'a GpuMemory,
    pub surfaces: &'a SurfaceContext,
    /// Per-host-thread cache of resolved binding-table entries.
    pub cache: &'a mut [Option<Surface>; 253],
    /// The thread group's shared local memory.
    pub slm: &'a mut [u8],
    /// Messages executed (statistics).
    pub messages: u64,
    /// The object the last memory access went to: lanes of a message, and the messages of
    /// one thread, mostly touch the same buffer, so most accesses skip the search over the
    /// job's objects. Only accesses wholly inside it take this path; everything else (crossing
    /// an object's end, unbacked addresses and so the scratch page or a `simstrict` fault)
    /// goes through [`GpuMemory`] as before.
    span: Option<Span<'a>>,
}

impl<'a> Port<'a> {
    pub fn new(
        mem: &'a GpuMemory,
        surfaces: &'a SurfaceContext,
        cache: &'a mut [Option<Surface>; 253],
        slm: &'a mut [u8],
    ) -> Port<'a> {
        Port {
            mem,
            surfaces,
            cache,
            slm,
            messages: 0,
            span: None,
        }
    }

    /// The cached or newly looked-up object that holds all of `[address, address + len)`.
    fn span_for(&mut self, address: u64, len: usize) -> Option<Span<'a>> {
        if let Some(s) = self.span {
            if s.covers(address, len) {
                return Some(s);
            }
        }
        let mem: &'a GpuMemory = self.mem;
        let s = mem.span_at(address)?;
        if !s.covers(address, len) {
            return None;
        }
        self.span = Some(s);
        Some(s)
    }

    /// Reads GPU memory at `address` (PPGTT semantics, see [`GpuMemory::read`]).
    fn mem_read(&mut self, address: u64, out: &mut [u8]) -> Result<(), String> {
        match self.span_for(address, out.len()) {
            Some(s) => {
                s.read(address, out);
                Ok(())
            }
            None => self.mem.read(address, out).map_err(|e| e.to_string()),
        }
    }

    /// Writes GPU memory at `address` (PPGTT semantics, see [`GpuMemory::write`]).
    fn mem_write(&mut self, address: u64, data: &[u8]) -> Result<(), String> {
        match self.span_for(address, data.len()) {
            Some(s) => {
                s.write(address, data);
                Ok(())
            }
            None => self.mem.write(address, data).map_err(|e| e.to_string()),
        }
    }
}

fn rd32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn rd64(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default())
}

fn wr32(b: &mut [u8], i: usize, v: u32) {
    b[i..i + 4].copy_from_slice(&v.to_le_bytes());
}

/// The values an atomic operates on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AtomicData {
    Int32,
    Int64,
    Float32,
}

/// Atomic `op` on `old` with operands `a`, `b` (values of `data`'s width, zero-extended):
/// the new value (None = no write) and the value returned. Integer operations by the data
/// port's atomic operation code (1 AND, 2 OR, 3 XOR, 4 MOV, 5 INC, 6 DEC, 7 ADD, 8 SUB,
/// 9 REVSUB, 10 IMAX, 11 IMIN, 12 UMAX, 13 UMIN, 14 CMPWR, 15 PREDEC), the same for 32 and
/// 64 bits; float FMAX 1, FMIN 2, FCMPWR 3 with IEEE min/max (a NaN operand loses).
fn atomic(op: u32, data: AtomicData, old: u64, a: u64, b: u64) -> AtomicResult {
    if data == AtomicData::Float32 {
        let (fo, fa) = (f32::from_bits(old as u32), f32::from_bits(a as u32));
        return Ok(match op {
            1 => (Some(u64::from(fo.max(fa).to_bits())), old),
            2 => (Some(u64::from(fo.min(fa).to_bits())), old),
            3 => (if fo == fa { Some(b) } else { None }, old),
            _ => return Err(format!("float atomic with invalid operation {op}")),
        });
    }
    let wide = data == AtomicData::Int64;
    let mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
    let signed = |v: u64| {
        if wide {
            v as i64
        } else {
            i64::from(v as u32 as i32)
        }
    };
    let new = match op {
        1 => old & a,
        2 => old | a,
        3 => old ^ a,
        4 => a,
        5 => old.wrapping_add(1),
        6 => old.wrapping_sub(1),
        7 => old.wrapping_add(a),
        8 => old.wrapping_sub(a),
        9 => a.wrapping_sub(old),
        10 => {
            if signed(a) > signed(old) {
                a
            } else {
                old
            }
        }
        11 => {
            if signed(a) < signed(old) {
                a
            } else {
                old
            }
        }
        12 => old.max(a),
        13 => old.min(a),
        14 => return Ok((if old == a { Some(b) } else { None }, old)),
        15 => {
            let n = old.wrapping_sub(1) & mask;
            return Ok((Some(n), n));
        }
        _ => {
            let bits = if wide { 64 } else { 32 };
            return Err(format!("{bits}-bit atomic with invalid operation {op}"));
        }
    } & mask;
    Ok((Some(new), old))
}

/// What [`atomic`] gives: the value to write (None: none) and the value returned.
type AtomicResult = Result<(Option<u64>, u64), String>;

/// [`atomic`] on the 4 or 8 bytes of `data` at GPU address `addr` (one locked
/// read-modify-write); returns the atomic's return value.
fn memory_atomic(
    mem: &GpuMemory,
    addr: u64,
    op: u32,
    data: AtomicData,
    a: u64,
    b: u64,
) -> Result<u64, String> {
    let mut out = Ok(0);
    let mut apply = |old: u64| match atomic(op, data, old, a, b) {
        Ok((new, ret)) => {
            out = Ok(ret);
            new
        }
        Err(e) => {
            out = Err(e);
            None
        }
    };
    if data == AtomicData::Int64 {
        mem.atomic_u64(addr, apply).map_err(|e| e.to_string())?;
    } else {
        mem.atomic_u32(addr, |old| apply(u64::from(old)).map(|n| n as u32))
            .map_err(|e| e.to_string())?;
    }
    out
}

/// Number of data operands of an atomic.
fn atomic_operands(op: u32, float: bool) -> usize {
    match (float, op) {
        (false, 5 | 6 | 15) => 0,
        (false, 14) | (true, 3) => 2,
        _ => 1,
    }
}

/// The fields of a data-cache message descriptor: binding-table index (bits 7:0), message
/// control (bits 13:8) and message type (bits 18:14).
#[derive(Clone, Copy, Debug)]
struct DcDesc {
    bti: u32,
    mc: u32,
    ty: u32,
}

impl DcDesc {
    fn decode(desc: u32) -> Self {
        DcDesc {
            bti: desc & 0xFF,
            mc: (desc >> 8) & 0x3F,
            ty: (desc >> 14) & 0x1F,
        }
    }
}

/// How a message's offsets become addresses: its binding-table entry, resolved once per
/// message (the surface cannot change while the message runs).
#[derive(Clone, Copy)]
enum Addressing {
    /// Shared local memory of this many bytes.
    Slm(usize),
    /// NULL surface.
    Null,
    /// A32 offsets from `base`, not bounds-checked.
    Stateless(u64),
    /// A buffer of `size` bytes at `base`, checked at dword granularity.
    Buffer { base: u64, size: u64 },
}

impl Addressing {
    /// Maps byte offset `off` of a `len`-byte access (checked at dword granularity).
    fn target(self, off: u32, len: u32) -> Target {
        match self {
            Addressing::Slm(slm_len) => {
                let first = (off & !3) as usize;
                let last = ((off + len - 1) | 3) as usize;
                if last < slm_len && first <= last {
                    Target::Slm(off as usize)
                } else {
                    Target::Oob
                }
            }
            Addressing::Null => Target::Oob,
            Addressing::Stateless(base) => Target::Mem(base.wrapping_add(off as u64)),
            Addressing::Buffer { base, size } => {
                let last_dword_end = ((off as u64 + len as u64 - 1) | 3) + 1;
                if last_dword_end <= size {
                    Target::Mem(base + off as u64)
                } else {
                    Target::Oob
                }
            }
        }
    }
}

/// The parts of a `len`-byte access at byte offset `off` that lie in one dword each, as
/// (offset within the access, length): one part, or two for an access that crosses a dword
/// boundary (`len` is at most 4).
fn dword_pieces(off: u32, len: u32) -> impl Iterator<Item = (u32, u32)> {
    let first = (4 - off % 4).min(len);
    [(0, first), (first, len - first)]
        .into_iter()
        .filter(|&(_, n)| n > 0)
}

/// Where a lane's access goes after addressing and bounds checks.
enum Target {
    Mem(u64),
    Slm(usize),
    /// Out of bounds: read 0, write nothing.
    Oob,
}

impl Port<'_> {
    fn surface(&mut self, bti: u32) -> Result<Surface, String> {
        match bti {
            BTI_STATELESS | BTI_STATELESS_NC => Ok(Surface::Stateless {
                base: self.surfaces.general_state_base,
            }),
            0..=252 => {
                if let Some(s) = self.cache[bti as usize] {
                    return Ok(s);
                }
                let s = self.surfaces.resolve(self.mem, bti)?;
                self.cache[bti as usize] = Some(s);
                Ok(s)
            }
            _ => Err(format!("binding table index {bti} is not valid here")),
        }
    }

    /// How BTI `bti`'s offsets map to memory (an error for image surfaces).
    fn addressing(&mut self, bti: u32) -> Result<Addressing, String> {
        if bti == BTI_SLM {
            return Ok(Addressing::Slm(self.slm.len()));
        }
        Ok(match self.surface(bti)? {
            Surface::Null => Addressing::Null,
            Surface::Stateless { base } => Addressing::Stateless(base),
            Surface::Image(_) => {
                return Err(format!(
                    "BTI {bti}: untyped/scattered message to an image surface"
                ))
            }
            Surface::Buffer { base, size, .. } => Addressing::Buffer { base, size },
        })
    }

    /// [`Port::addressing`] of `bti`, resolved on a message's first enabled lane and kept
    /// in `slot` for the others (a message with no enabled lane resolves nothing, so it
    /// reports no error either).
    fn addressing_once(
        &mut self,
        slot: &mut Option<Addressing>,
        bti: u32,
    ) -> Result<Addressing, String> {
        match *slot {
            Some(a) => Ok(a),
            None => {
                let a = self.addressing(bti)?;
                *slot = Some(a);
                Ok(a)
            }
        }
    }

    /// Maps byte offset `off` of a `len`-byte access (checked at dword granularity).
    fn target(&mut self, bti: u32, off: u32, len: u32) -> Result<Target, String> {
        Ok(self.addressing(bti)?.target(off, len))
    }

    fn load(&mut self, t: &Target, out: &mut [u8]) -> Result<(), String> {
        match *t {
            Target::Mem(a) => self.mem_read(a, out),
            Target::Slm(o) => {
                out.copy_from_slice(&self.slm[o..o + out.len()]);
                Ok(())
            }
            Target::Oob => {
                out.fill(0);
                Ok(())
            }
        }
    }

    fn store(&mut self, t: &Target, data: &[u8]) -> Result<(), String> {
        match *t {
            Target::Mem(a) => self.mem_write(a, data),
            Target::Slm(o) => {
                self.slm[o..o + data.len()].copy_from_slice(data);
                Ok(())
            }
            Target::Oob => Ok(()),
        }
    }

    /// Lanes of a message: SIMD width from the descriptor, and the enabled ones.
    fn lanes(simd: u32, exec_mask: u32) -> impl Iterator<Item = usize> {
        (0..simd as usize).filter(move |&l| exec_mask & (1 << l) != 0)
    }

    fn need(payload: &[u8], regs: usize, what: &str) -> Result<(), String> {
        if payload.len() < regs * 32 {
            Err(format!(
                "{what}: payload has {} registers, the message needs {regs}",
                payload.len() / 32
            ))
        } else {
            Ok(())
        }
    }

    /// Untyped surface read/write (32-bit channels X..W).
    fn untyped_rw(
        &mut self,
        DcDesc { bti, mc, .. }: DcDesc,
        write: bool,
        a64: bool,
        m: Message<'_>,
    ) -> Result<(), String> {
        let (exec_mask, payload, response) = (m.exec_mask, m.payload, m.response);
        let simd = match (mc >> 4) & 3 {
            1 => 16,
            2 => 8,
            m => return Err(format!("untyped surface message in SIMD4x2 mode ({m})")),
        };
        let blocks = simd / 8;
        let addr_regs = if a64 { 2 * blocks } else { blocks } as usize;
        let n_channels = (0..4).filter(|c| mc & (1 << c) == 0).count();
        let need = addr_regs
            + if write {
                n_channels * blocks as usize
            } else {
                0
            };
        Self::need(payload, need, "untyped surface message")?;
        if !write && response.len() < n_channels * blocks as usize * 32 {
            return Err("untyped read: response shorter than the enabled channels".into());
        }
        let mut addressing = None;
        for l in Self::lanes(simd, exec_mask) {
            for k in 0..n_channels {
                let t = if a64 {
                    Target::Mem(rd64(payload, 8 * l) + 4 * k as u64)
                } else {
                    let off = rd32(payload, 4 * l).wrapping_add(4 * k as u32);
                    self.addressing_once(&mut addressing, bti)?.target(off, 4)
                };
                let data_at = (addr_regs + k * blocks as usize) * 32 + 4 * l;
                if write {
                    self.store(&t, &payload[data_at..data_at + 4])?;
                } else {
                    let mut v = [0u8; 4];
                    self.load(&t, &mut v)?;
                    let r = (k * blocks as usize) * 32 + 4 * l;
                    response[r..r + 4].copy_from_slice(&v);
                }
            }
        }
        Ok(())
    }

    /// Untyped atomic (32-bit, integer or float; A64 also 64-bit).
    fn untyped_atomic(
        &mut self,
        DcDesc { bti, mc, .. }: DcDesc,
        float: bool,
        a64: bool,
        m: Message<'_>,
    ) -> Result<(), String> {
        let (exec_size, exec_mask, payload, response) =
            (m.exec_size, m.exec_mask, m.payload, m.response);
        let op = if float { mc & 3 } else { mc & 0xF };
        let ret = mc & 0x20 != 0;
        let (simd, wide) = if a64 {
            (if exec_size > 8 { 16 } else { 8 }, !float && mc & 0x10 != 0)
        } else {
            (if mc & 0x10 != 0 { 8 } else { 16 }, false)
        };
        let blocks = (simd / 8) as usize;
        let addr_regs = if a64 { 2 * blocks } else { blocks };
        let dsize = if wide { 8 } else { 4 };
        let data_regs = blocks * dsize / 4;
        let nops = atomic_operands(op, float);
        Self::need(payload, addr_regs + nops * data_regs, "untyped atomic")?;
        if ret && response.len() < data_regs * 32 {
            return Err("untyped atomic: response too short".into());
        }
        let mut addressing = None;
        for l in Self::lanes(simd, exec_mask) {
            let operand = |k: usize| -> u64 {
                let at = (addr_regs + k * data_regs) * 32 + dsize * l;
                if wide {
                    rd64(payload, at)
                } else {
                    rd32(payload, at) as u64
                }
            };
            let (a, b) = (
                if nops > 0 { operand(0) } else { 0 },
                if nops > 1 { operand(1) } else { 0 },
            );
            let t = if a64 {
                Target::Mem(rd64(payload, 8 * l))
            } else {
                self.addressing_once(&mut addressing, bti)?
                    .target(rd32(payload, 4 * l), dsize as u32)
            };
            let data = match (float, wide) {
                (true, _) => AtomicData::Float32,
                (false, true) => AtomicData::Int64,
                (false, false) => AtomicData::Int32,
            };
            let result: u64 = match t {
                Target::Oob => 0,
                Target::Slm(o) => {
                    let (new, r) = atomic(op, data, u64::from(rd32(self.slm, o)), a, b)?;
                    if let Some(n) = new {
                        wr32(self.slm, o, n as u32);
                    }
                    r
                }
                Target::Mem(addr) => memory_atomic(self.mem, addr, op, data, a, b)?,
            };
            if ret {
                let at = dsize * l;
                response[at..at + dsize].copy_from_slice(&result.to_le_bytes()[..dsize]);
            }
        }
        Ok(())
    }

    /// Byte scattered (1/2/4 bytes per lane, one dword per lane in the payload) and A64
    /// scattered; `size_log2` 0..=2 (A64 also 3).
    fn scattered(
        &mut self,
        bti: u32,
        (simd, size_log2): (u32, u32),
        write: bool,
        a64: bool,
        m: Message<'_>,
    ) -> Result<(), String> {
        let (exec_mask, payload, response) = (m.exec_mask, m.payload, m.response);
        let blocks = (simd / 8) as usize;
        let addr_regs = if a64 { 2 * blocks } else { blocks };
        let size = 1usize << size_log2;
        let slot = size.max(4);
        let data_regs = blocks * slot / 4;
        Self::need(
            payload,
            addr_regs + if write { data_regs } else { 0 },
            "scattered message",
        )?;
        if !write && response.len() < data_regs * 32 {
            return Err("scattered read: response too short".into());
        }
        let mut addressing = None;
        for l in Self::lanes(simd, exec_mask) {
            let data = addr_regs * 32 + slot * l;
            let mut v = [0u8; 8];
            if a64 {
                let t = Target::Mem(rd64(payload, 8 * l));
                if write {
                    self.store(&t, &payload[data..data + size])?;
                } else {
                    self.load(&t, &mut v[..size])?;
                }
            } else {
                // An access that crosses a dword boundary (4 bytes at an offset that is not
                // a multiple of 4, or a word at 4k + 3) is checked per dword it touches: the
                // bytes in an in-bounds dword are read or written, those in an outside dword
                // read 0 and are not written (docs/gen9.md 6.3).
                let a = self.addressing_once(&mut addressing, bti)?;
                let off = rd32(payload, 4 * l);
                for (at, len) in dword_pieces(off, size as u32) {
                    let t = a.target(off.wrapping_add(at), len);
                    let r = at as usize..(at + len) as usize;
                    if write {
                        self.store(&t, &payload[data + r.start..data + r.end])?;
                    } else {
                        self.load(&t, &mut v[r])?;
                    }
                }
            }
            if !write {
                let at = slot * l;
                response[at..at + slot].copy_from_slice(&v[..slot]);
            }
        }
        Ok(())
    }

    /// OWord block read/write: header GRF with DW2 = offset (OWords; bytes for the unaligned
    /// read), for stateless BTIs DW5[31:10] = the thread's scratch base (relative to General
    /// State Base, as R0.5 gives it). Block size code mc[2:0]: 0 = 1 OWord (low half), 1 = 1
    /// OWord (high half), 2 = 2, 3 = 4, 4 = 8 OWords.
    fn oword_block(
        &mut self,
        DcDesc { bti, mc, .. }: DcDesc,
        write: bool,
        unaligned: bool,
        m: Message<'_>,
    ) -> Result<(), String> {
        let (payload, response) = (m.payload, m.response);
        let (owords, reg_off) = match mc & 7 {
            0 => (1usize, 0usize),
            1 => (1, 16),
            2 => (2, 0),
            3 => (4, 0),
            4 => (8, 0),
            m => return Err(format!("OWord block message with block size {m}")),
        };
        let bytes = owords * 16;
        let regs = bytes.div_ceil(32);
        Self::need(
            payload,
            1 + if write { regs } else { 0 },
            "OWord block message",
        )?;
        if !write && response.len() < regs * 32 {
            return Err("OWord block read: response too short".into());
        }
        let dw2 = rd32(payload, 8);
        let offset = if unaligned { dw2 } else { dw2.wrapping_mul(16) };
        let target = match bti {
            BTI_STATELESS | BTI_STATELESS_NC => {
                let scratch = (rd32(payload, 20) & !0x3FF) as u64;
                Target::Mem(
                    self.surfaces
                        .general_state_base
                        .wrapping_add(scratch)
                        .wrapping_add(offset as u64),
                )
            }
            _ => self.target(bti, offset, bytes as u32)?,
        };
        if write {
            self.store(&target, &payload[32 + reg_off..32 + reg_off + bytes])
        } else {
            self.load(&target, &mut response[reg_off..reg_off + bytes])
        }
    }

    fn dc0(&mut self, m: Message<'_>) -> Result<(), String> {
        let desc = m.desc;
        let d = DcDesc::decode(desc);
        let (bti, mc, ty) = (d.bti, d.mc, d.ty);
        match ty {
            // Byte scattered read/write.
            0x04 | 0x0C => {
                let simd = if mc & 1 != 0 { 16 } else { 8 };
                let size = (mc >> 2) & 3;
                if size > 2 {
                    return Err(format!("byte scattered message with size code {size}"));
                }
                self.scattered(bti, (simd, size), ty == 0x0C, false, m)
            }
            // DWord scattered read/write (Mesa sends a header GRF first).
            0x03 | 0x0B => {
                let simd = if mc & 1 != 0 { 16 } else { 8 };
                let header = desc & (1 << 19) != 0;
                let payload = if header {
                    &m.payload[32.min(m.payload.len())..]
                } else {
                    m.payload
                };
                self.scattered(bti, (simd, 2), ty == 0x0B, false, Message { payload, ..m })
            }
            // Memory fence: everything is already globally visible.
            0x07 => Ok(()),
            // OWord block read / unaligned read / write (scratch spills and fills).
            0x00 | 0x01 | 0x08 => self.oword_block(d, ty == 0x08, ty == 0x01, m),
            _ => Err(format!(
                "data cache 0 message type {ty:#x} (descriptor {desc:#010x}) is not implemented"
            )),
        }
    }

    /// Typed surface read (0x05), write (0x0D) and atomic (0x06); SIMD8, coordinates U[, V[,
    /// R[, LOD]]] one GRF each, then data. Images map U, V, R to x, y, layer (1-D arrays: x,
    /// layer; 3-D: x, y, z); LOD is added to the surface's MIPCount/LOD. Linear and tiled
    /// images alike go through the layout module. Reads return the enabled channels (missing
    /// ones: 0, alpha 1); out-of-bounds texels read 0 and are not written, so no access
    /// leaves the surface. Formats must be ones Gen9's typed messages accept natively
    /// (docs/images.md, "Format table"); anything else is an error, as a compiler that
    /// forgot to lower the format would be.
    fn typed(&mut self, DcDesc { bti, mc, ty }: DcDesc, m: Message<'_>) -> Result<(), String> {
        let (exec_mask, payload, response) = (m.exec_mask, m.payload, m.response);
        if bti > 252 {
            return Err(format!("typed message to special BTI {bti}"));
        }
        let surface = self.surface(bti)?;
        let format = match surface {
            Surface::Image(im) => Some(im.format),
            Surface::Buffer { format, .. } => {
                Some(SurfaceFormat::from_hw(format).ok_or_else(|| {
                    format!("BTI {bti}: surface format {format} is not in the format table")
                })?)
            }
            Surface::Null => None,
            Surface::Stateless { .. } => return Err("typed message to a stateless surface".into()),
        };
        if let Some(f) = format {
            let i = f.info();
            let (ok, what) = match ty {
                0x05 => (i.typed_read, "read"),
                0x0D => (i.typed_write, "write"),
                _ => (i.typed_atomic, "atomic"),
            };
            if !ok {
                return Err(format!(
                    "BTI {bti}: typed {what} of {f}: Gen9's typed messages do not support the format"
                ));
            }
        }
        let regs = payload.len() / 32;
        let (coords, channels, op) = match ty {
            0x05 | 0x0D => {
                let ch: Vec<usize> = (0..4).filter(|c| mc & (1 << c) == 0).collect();
                let data = if ty == 0x0D { ch.len() } else { 0 };
                (regs.saturating_sub(data), ch, 0)
            }
            _ => {
                let op = mc & 0xF;
                let k = atomic_operands(op, false);
                (regs.saturating_sub(k), vec![0], op)
            }
        };
        if coords == 0 || coords > 4 {
            return Err(format!("typed message with {coords} coordinate registers"));
        }
        for l in Self::lanes(8, exec_mask) {
            let c = |i: usize| {
                if i < coords {
                    rd32(payload, i * 32 + 4 * l)
                } else {
                    0
                }
            };
            let (u, v, r, lod) = (c(0), c(1), c(2), c(3));
            let addr = match surface {
                Surface::Image(im) => {
                    let level = im.mip_count_lod.saturating_add(lod);
                    match im.kind {
                        ImageKind::D1 => {
                            im.texel_address(u, 0, if im.arrayed { v } else { 0 }, level)
                        }
                        ImageKind::D2 | ImageKind::Cube => {
                            let layer = if im.arrayed || im.kind == ImageKind::Cube {
                                r
                            } else {
                                0
                            };
                            im.texel_address(u, v, layer, level)
                        }
                        ImageKind::D3 => im.texel_address(u, v, r, level),
                    }
                }
                Surface::Buffer {
                    base, size, stride, ..
                } => (u as u64 * stride + stride <= size && stride > 0)
                    .then(|| base + u as u64 * stride),
                _ => None,
            };
            let fmt = format.unwrap_or(SurfaceFormat::R32_UINT);
            let n = fmt.bytes_per_texel() as usize;
            match ty {
                0x05 => {
                    let texel = match addr {
                        Some(a) => {
                            let mut raw = [0u8; 16];
                            self.mem_read(a, &mut raw[..n])?;
                            fmt.decode(&raw)
                        }
                        None => [0; 4],
                    };
                    for (k, &ch) in channels.iter().enumerate() {
                        wr32(response, k * 32 + 4 * l, texel[ch]);
                    }
                }
                0x0D => {
                    let Some(a) = addr else { continue };
                    let mut raw = [0u8; 16];
                    let stored = (0..4u8).filter(|&c| fmt.has_component(c));
                    let partial = stored.clone().any(|c| !channels.contains(&(c as usize)));
                    let mut texel = [0u32; 4];
                    if partial {
                        self.mem_read(a, &mut raw[..n])?;
                        texel = fmt.decode(&raw);
                    }
                    for (k, &ch) in channels.iter().enumerate() {
                        texel[ch] = rd32(payload, (coords + k) * 32 + 4 * l);
                    }
                    fmt.encode(texel, &mut raw);
                    self.mem_write(a, &raw[..n])?;
                }
                _ => {
                    let a0 = if regs > coords {
                        rd32(payload, coords * 32 + 4 * l)
                    } else {
                        0
                    };
                    let b0 = if regs > coords + 1 {
                        rd32(payload, (coords + 1) * 32 + 4 * l)
                    } else {
                        0
                    };
                    let ret = match addr {
                        Some(a) => {
                            memory_atomic(self.mem, a, op, AtomicData::Int32, a0.into(), b0.into())?
                                as u32
                        }
                        None => 0,
                    };
                    if mc & 0x20 != 0 && response.len() >= 32 {
                        wr32(response, 4 * l, ret);
                    }
                }
            }
        }
        Ok(())
    }

    /// A sampler message (SFID 2): the surface from the binding table, SAMPLER_STATE from
    /// the sampler-state table (IDD SamplerStatePointer, or header dword 3 bits 31:5 when a
    /// header gives one; both relative to Dynamic State Base), its border colour from the
    /// state's BorderColorPointer (relative to Dynamic State Base).
    fn sampler(&mut self, m: Message<'_>) -> Result<(), String> {
        let (desc, exec_mask, payload, response) = (m.desc, m.exec_mask, m.payload, m.response);
        use ferrite_isa::sampler_msg::{SamplerDesc, SamplerMsgType as M};
        let d = SamplerDesc::decode(desc)?;
        if d.bti as u32 > 252 {
            return Err(format!(
                "{d}: binding-table index {} is not a surface",
                d.bti
            ));
        }
        let surface = self.surface(d.bti as u32)?;
        let needs_sampler = matches!(
            d.msg,
            M::Sample | M::SampleL | M::SampleD | M::SampleLz | M::Gather4 | M::Gather4Po
        );
        let params = if needs_sampler {
            let header_ptr = if d.header && payload.len() >= 32 {
                rd32(payload, 12) & !0x1F
            } else {
                0
            };
            let table = if header_ptr != 0 {
                header_ptr as u64
            } else {
                self.surfaces.sampler_state_pointer
            };
            let at = self.surfaces.dynamic_state_base + table + 16 * d.sampler as u64;
            let mut dw = [0u32; 4];
            for (i, w) in dw.iter_mut().enumerate() {
                *w = self
                    .mem
                    .read_u32(at + 4 * i as u64)
                    .map_err(|e| format!("{d}: sampler state: {e}"))?;
            }
            let ptr = crate::genxml::SamplerState::unpack(&dw).border_color_pointer;
            let mut border = [0u32; 4];
            for (i, w) in border.iter_mut().enumerate() {
                *w = self
                    .mem
                    .read_u32(self.surfaces.dynamic_state_base + ptr + 4 * i as u64)
                    .map_err(|e| format!("{d}: border colour: {e}"))?;
            }
            Some(
                crate::gpu::sampler::SamplerParams::decode(&dw, &border)
                    .map_err(|e| format!("{d}: {e}"))?,
            )
        } else {
            None
        };
        crate::gpu::sampler::execute(
            self.mem,
            &d,
            &surface,
            params.as_ref(),
            exec_mask,
            payload,
            response,
        )
        .map_err(|e| format!("{d}: {e}"))
    }

    fn dc1(&mut self, m: Message<'_>) -> Result<(), String> {
        let desc = m.desc;
        let d = DcDesc::decode(desc);
        let (bti, mc, ty) = (d.bti, d.mc, d.ty);
        match ty {
            0x01 => self.untyped_rw(d, false, false, m),
            0x09 => self.untyped_rw(d, true, false, m),
            0x11 => self.untyped_rw(d, false, true, m),
            0x19 => self.untyped_rw(d, true, true, m),
            0x02 => self.untyped_atomic(d, false, false, m),
            0x1B => self.untyped_atomic(d, true, false, m),
            0x12 => self.untyped_atomic(d, false, true, m),
            0x1D => self.untyped_atomic(d, true, true, m),
            0x05 | 0x0D | 0x06 => self.typed(d, m),
            0x10 | 0x1A => {
                if mc & 3 != 0 {
                    return Err(format!("A64 scattered message with subtype {}", mc & 3));
                }
                let simd = if mc & 0x10 != 0 { 16 } else { 8 };
                self.scattered(bti, (simd, (mc >> 2) & 3), ty == 0x1A, true, m)
            }
            _ => Err(format!(
                "data cache 1 message type {ty:#x} (descriptor {desc:#010x}) is not implemented"
            )),
        }
    }
}

impl MessagePort for Port<'_> {
    fn send(&mut self, m: Message<'_>) -> Result<SendOutcome, String> {
        self.messages += 1;
        let (sfid, desc) = (m.sfid, m.desc);
        let eot = m.ex_desc & (1 << 5) != 0;
        match sfid {
            SFID_GATEWAY => {
                return match desc & 7 {
                    4 => Ok(SendOutcome::Barrier),
                    f => Err(format!("message gateway function {f} is not implemented")),
                };
            }
            SFID_THREAD_SPAWNER => {
                return if eot {
                    Ok(SendOutcome::Eot)
                } else {
                    Err(format!(
                        "thread spawner message {desc:#010x} without EOT is not implemented"
                    ))
                };
            }
            SFID_SAMPLER => self.sampler(m)?,
            SFID_DC0 => self.dc0(m)?,
            SFID_DC1 => self.dc1(m)?,
            _ => return Err(format!("shared function {sfid} is not implemented")),
        }
        Ok(if eot {
            SendOutcome::Eot
        } else {
            SendOutcome::Done
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{BoMemory, ExecObject};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// Two adjacent one-page objects at 0x10000 and 0x11000, unbacked from 0x12000; every
    /// byte holds the low byte of its address plus `tag`.
    fn two_objects(strict: bool) -> GpuMemory {
        let objs: Vec<ExecObject> = [0x10000u64, 0x11000]
            .iter()
            .enumerate()
            .map(|(i, &address)| {
                let bo = BoMemory::new(4096, Arc::new(AtomicUsize::new(0))).expect("mmap");
                let bytes: Vec<u8> = (0..4096u64)
                    .map(|o| ((address + o) as u8).wrapping_add(i as u8 * 0x40))
                    .collect();
                assert!(bo.write(0, &bytes));
                ExecObject {
                    handle: i as u32 + 1,
                    address,
                    size: 4096,
                    flags: 0,
                    memory: Arc::new(bo),
                }
            })
            .collect();
        GpuMemory::new(&objs, GpuMemory::new_scratch_page(), strict)
    }

    fn context() -> SurfaceContext {
        SurfaceContext {
            surface_state_base: 0,
            binding_table: 0,
            general_state_base: 0,
            dynamic_state_base: 0,
            sampler_state_pointer: 0,
        }
    }

    #[test]
    fn cached_object_gives_what_gpu_memory_gives_across_object_ends() {
        for strict in [false, true] {
            let mem = two_objects(strict);
            let ctx = context();
            let mut cache = [None; 253];
            let mut port = Port::new(&mem, &ctx, &mut cache, &mut []);
            // Each access runs after the previous one left its object in the cache: inside
            // the first object, across into the second, inside the second, across its end
            // into unbacked space, and back.
            for (address, len) in [
                (0x10010u64, 4usize),
                (0x10ffe, 4),
                (0x11004, 4),
                (0x11ffc, 8),
                (0x12000, 4),
                (0x10ff8, 16),
            ] {
                let mut via_port = vec![0u8; len];
                let mut direct = vec![0u8; len];
                let got = port.mem_read(address, &mut via_port);
                let want = mem.read(address, &mut direct).map_err(|e| e.to_string());
                assert_eq!(got, want, "read of {len} at {address:#x}, strict {strict}");
                assert_eq!(via_port, direct, "bytes at {address:#x}, strict {strict}");
                let data: Vec<u8> = (0..len as u8).map(|b| b ^ 0xA5).collect();
                let got = port.mem_write(address, &data);
                let want = mem.write(address, &data).map_err(|e| e.to_string());
                assert_eq!(got, want, "write of {len} at {address:#x}, strict {strict}");
            }
            // A strict fault names the first unbacked byte, as GpuMemory's does.
            let mut b = [0u8; 8];
            match port.mem_read(0x11ffc, &mut b) {
                Err(e) => assert!(strict && e.contains("0x12000"), "{e}"),
                Ok(()) => assert!(!strict, "strict mode let an unbacked read through"),
            }
        }
    }

    #[test]
    fn atomic_ops_follow_the_table() {
        // 32-bit operations, values as the dword they are.
        let int32 = |op, old: u32, a: u32, b: u32| -> Result<(Option<u32>, u32), String> {
            let (new, ret) = atomic(op, AtomicData::Int32, old.into(), a.into(), b.into())?;
            Ok((new.map(|n| n as u32), ret as u32))
        };
        let float32 = |op, old: u32, a: u32, b: u32| -> Result<(Option<u32>, u32), String> {
            let (new, ret) = atomic(op, AtomicData::Float32, old.into(), a.into(), b.into())?;
            Ok((new.map(|n| n as u32), ret as u32))
        };
        assert_eq!(int32(7, 5, 3, 0), Ok((Some(8), 5)));
        assert_eq!(int32(9, 5, 3, 0), Ok((Some(3u32.wrapping_sub(5)), 5)));
        assert_eq!(
            int32(10, (-2i32) as u32, 1, 0),
            Ok((Some(1), (-2i32) as u32))
        );
        assert_eq!(
            int32(12, (-2i32) as u32, 1, 0),
            Ok((Some((-2i32) as u32), (-2i32) as u32))
        );
        assert_eq!(int32(14, 5, 5, 9), Ok((Some(9), 5)));
        assert_eq!(int32(14, 5, 4, 9), Ok((None, 5)));
        assert_eq!(int32(15, 5, 0, 0), Ok((Some(4), 4)));
        assert!(int32(0, 5, 0, 0).is_err());
        assert_eq!(
            float32(1, 1.0f32.to_bits(), 2.0f32.to_bits(), 0),
            Ok((Some(2.0f32.to_bits()), 1.0f32.to_bits()))
        );
        // The same operations on 64 bits: no truncation to 32, signed compares on 64.
        let int64 = |op, old: u64, a: u64| atomic(op, AtomicData::Int64, old, a, 0);
        assert_eq!(
            int64(7, u64::from(u32::MAX), 1),
            Ok((Some(1 << 32), u64::from(u32::MAX)))
        );
        assert_eq!(int64(6, 0, 0), Ok((Some(u64::MAX), 0)));
        assert_eq!(
            int64(10, (-2i64) as u64, 1 << 40),
            Ok((Some(1 << 40), (-2i64) as u64))
        );
        assert_eq!(
            int64(11, (-2i64) as u64, 1 << 40),
            Ok((Some((-2i64) as u64), (-2i64) as u64))
        );
        // Wrapping in 32 bits stays in 32 bits.
        assert_eq!(int32(6, 0, 0, 0), Ok((Some(u32::MAX), 0)));
        assert_eq!(atomic_operands(5, false), 0);
        assert_eq!(atomic_operands(14, false), 2);
        assert_eq!(atomic_operands(7, false), 1);
    }
}
