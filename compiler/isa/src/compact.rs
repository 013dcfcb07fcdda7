//! Compaction to the 64-bit form and back (docs/gen9.md section 3; Gen9 uses the Gen8
//! tables, checked entry by entry against Mesa 25.0.7's `brw_eu_compact.c`).
//!
//! Both directions work on bits only: `uncompact(compact(n)) == n` for every native
//! instruction `n` that compacts. Mesa's optional "pre-compaction" retyping is
//! [`precompact`], applied by [`crate::encode_program`] on the model before encoding.

use crate::codec::{bit, get, Field};
use crate::error::{IsaError, Result};
use crate::model::*;

/// Compaction tables of one generation.
pub struct CompactTables {
    /// 19-bit control: native 33:31, 23:12, 10:9, 34, 8 (MSB first).
    pub control: [u32; 32],
    /// 21-bit datatype: native 63:61, 94:89, 46:35.
    pub datatype: [u32; 32],
    /// 15-bit subreg: native 100:96 (0 with an immediate), 68:64, 52:48.
    pub subreg: [u16; 32],
    /// 12-bit source index shared by src0 (native 88:77) and src1 (120:109).
    pub src: [u16; 32],
    /// 3-src 26-bit control: native 36:35, 34:32, 28:8.
    pub three_control: [u32; 4],
    /// 3-src 49-bit source index: native 126:125, 105:104, 84, 83, 114:107, 93:86, 72:65, 55:37.
    pub three_source: [u64; 4],
}

/// Gen8/Gen9 tables (F3.2, F3.3).
pub static GEN8_TABLES: CompactTables = CompactTables {
    control: [
        0x00002, 0x04000, 0x04001, 0x04002, 0x04003, 0x04004, 0x04005, 0x04007, 0x04008, 0x04009,
        0x0400d, 0x06000, 0x06001, 0x06002, 0x06003, 0x06004, 0x06005, 0x06007, 0x06009, 0x0600d,
        0x06010, 0x06100, 0x08000, 0x08002, 0x08004, 0x08100, 0x16000, 0x16010, 0x18000, 0x18100,
        0x28000, 0x28100,
    ],
    datatype: [
        0x040001, 0x040040, 0x040041, 0x0400c1, 0x04015d, 0x0405dd, 0x040741, 0x040745, 0x04075d,
        0x041041, 0x043040, 0x043041, 0x045145, 0x047144, 0x047145, 0x05c75d, 0x05d71d, 0x05d75c,
        0x05d75d, 0x05f75c, 0x00040c, 0x04005d, 0x040145, 0x041040, 0x045144, 0x047104, 0x049209,
        0x05775d, 0x05f75d, 0x04f34c, 0x049248, 0x04b248,
    ],
    subreg: [
        0x0000, 0x0001, 0x0008, 0x000f, 0x0010, 0x0080, 0x0100, 0x0180, 0x0200, 0x0210, 0x0280,
        0x1000, 0x1001, 0x1081, 0x1082, 0x1083, 0x1084, 0x1087, 0x1088, 0x108e, 0x108f, 0x1180,
        0x11e8, 0x2000, 0x2180, 0x3000, 0x3c87, 0x4000, 0x5000, 0x6000, 0x7000, 0x701c,
    ],
    src: [
        0x000, 0x002, 0x010, 0x012, 0x018, 0x020, 0x028, 0x048, 0x050, 0x070, 0x078, 0x300, 0x302,
        0x308, 0x310, 0x312, 0x320, 0x328, 0x338, 0x340, 0x342, 0x348, 0x350, 0x360, 0x368, 0x370,
        0x371, 0x378, 0x468, 0x469, 0x46a, 0x588,
    ],
    three_control: [0x0806001, 0x0006001, 0x0008001, 0x0008021],
    three_source: [
        0x007272720f000,
        0x007272720f002,
        0x007272720f008,
        0x007272720f020,
    ],
};

/// The tables for `gen` (Gen9 uses Gen8's).
pub fn tables(gen: Gen) -> &'static CompactTables {
    match gen {
        Gen::Gen8 | Gen::Gen9 => &GEN8_TABLES,
    }
}

/// A gathered bit string: native ranges, most significant first.
type Gather = &'static [(u32, u32)];

const CONTROL: Gather = &[(33, 31), (23, 12), (10, 9), (34, 34), (8, 8)];
const DATATYPE: Gather = &[(63, 61), (94, 89), (46, 35)];
const SUBREG_IMM: Gather = &[(68, 64), (52, 48)];
const SUBREG: Gather = &[(100, 96), (68, 64), (52, 48)];
const SRC0: Gather = &[(88, 77)];
const SRC1: Gather = &[(120, 109)];
const THREE_CONTROL: Gather = &[(36, 35), (34, 32), (28, 8)];
const THREE_SOURCE: Gather = &[
    (126, 125),
    (105, 104),
    (84, 84),
    (83, 83),
    (114, 107),
    (93, 86),
    (72, 65),
    (55, 37),
];

/// Fields the compacted form carries unchanged: (compacted hi, lo), (native hi, lo).
type Moved = &'static [((u32, u32), (u32, u32))];

/// Three-source: the destination register, src0 RepCtrl, debug control, saturate, src1 and
/// src2 RepCtrl, the three source registers (docs/gen9.md §3.3).
const THREE_MOVED: Moved = &[
    ((18, 12), (62, 56)),
    ((28, 28), (64, 64)),
    ((30, 30), (30, 30)),
    ((31, 31), (31, 31)),
    ((32, 32), (85, 85)),
    ((33, 33), (106, 106)),
    ((49, 43), (82, 76)),
    ((56, 50), (103, 97)),
    ((63, 57), (124, 118)),
];
/// Three-source source subregisters, dword indices as in the native fields; an instruction
/// compacts only when they are zero (docs/gen9.md §3.3).
const THREE_SUBREG: Moved = &[
    ((36, 34), (75, 73)),
    ((39, 37), (96, 94)),
    ((42, 40), (117, 115)),
];
/// One- and two-source: debug control, AccWrEnable, the conditional modifier, the destination
/// and src0 registers (docs/gen9.md §3.1).
const MOVED: Moved = &[
    ((7, 7), (30, 30)),
    ((23, 23), (28, 28)),
    ((27, 24), (27, 24)),
    ((47, 40), (60, 53)),
    ((55, 48), (76, 69)),
];

fn move_to_compact(c: &mut u64, w: u128, fields: Moved) {
    for &((chi, clo), (hi, lo)) in fields {
        cput(c, chi, clo, get(w, Field { hi, lo }) as u64);
    }
}

fn move_to_native(w: &mut u128, c: u64, fields: Moved) {
    for &((chi, clo), (hi, lo)) in fields {
        scatter(w, &[(hi, lo)], cget(c, chi, clo));
    }
}

fn gather(w: u128, g: Gather) -> u64 {
    let mut v = 0u64;
    for &(hi, lo) in g {
        v = (v << (hi - lo + 1)) | get(w, Field { hi, lo }) as u64;
    }
    v
}

fn scatter(w: &mut u128, g: &[(u32, u32)], mut v: u64) {
    for &(hi, lo) in g.iter().rev() {
        let n = hi - lo + 1;
        let m = (1u128 << n) - 1;
        *w = (*w & !(m << lo)) | (((v as u128) & m) << lo);
        v >>= n;
    }
}

fn cget(c: u64, hi: u32, lo: u32) -> u64 {
    (c >> lo) & ((1u64 << (hi - lo + 1)) - 1)
}

fn cput(c: &mut u64, hi: u32, lo: u32, v: u64) {
    let m = (1u64 << (hi - lo + 1)) - 1;
    *c = (*c & !(m << lo)) | ((v & m) << lo);
}

fn lookup<T: Copy + Into<u64>>(table: &[T], v: u64) -> Option<u64> {
    table.iter().position(|&t| t.into() == v).map(|i| i as u64)
}

fn is_three_src(opcode_hw: u32, gen: Gen) -> bool {
    Opcode::from_hw(opcode_hw as u8, gen).is_some_and(|o| o.format() == Format::ThreeSrc)
}

/// True if the native instruction has an immediate in bits 127:96 (src0 or src1 file IMM).
fn has_imm(w: u128) -> bool {
    get(w, Field { hi: 42, lo: 41 }) == 3 || get(w, Field { hi: 90, lo: 89 }) == 3
}

/// Compacts a native instruction, or returns `None` if any field has no compact form
/// (F3.4). Never changes meaning: `uncompact(compact(n)?) == n`.
pub fn compact(native: &[u8; 16], gen: Gen) -> Option<[u8; 8]> {
    compact_u128(u128::from_le_bytes(*native), gen).map(u64::to_le_bytes)
}

/// [`compact`] on `u128`/`u64` values.
pub fn compact_u128(w: u128, gen: Gen) -> Option<u64> {
    let t = tables(gen);
    let op = get(w, Field { hi: 6, lo: 0 });
    if bit(w, 29) || bit(w, 7) {
        return None;
    }
    let mut c = 0u64;
    cput(&mut c, 6, 0, op as u64);
    cput(&mut c, 29, 29, 1);
    if is_three_src(op, gen) {
        // F3.3 / F3.4.5: bit 127 reserved, registers < 128, no source sub-register
        // (Mesa 25.0.7 mishandles the compact sub-register fields on Gen9).
        if bit(w, 127) || bit(w, 63) {
            return None;
        }
        if THREE_SUBREG
            .iter()
            .any(|&(_, (hi, lo))| get(w, Field { hi, lo }) != 0)
        {
            return None;
        }
        let ci = lookup(&t.three_control, gather(w, THREE_CONTROL))?;
        let si = lookup(&t.three_source, gather(w, THREE_SOURCE))?;
        cput(&mut c, 9, 8, ci);
        cput(&mut c, 11, 10, si);
        move_to_compact(&mut c, w, THREE_MOVED);
        return Some(c);
    }
    // SEND/SENDC with EOT never compact (F3.4.3); bits 95, 47, 11 have no compact home.
    let is_send = matches!(op, 0x31 | 0x32);
    if is_send && bit(w, 127) {
        return None;
    }
    if bit(w, 95) || bit(w, 47) || bit(w, 11) {
        return None;
    }
    let imm = has_imm(w);
    let ci = lookup(&t.control, gather(w, CONTROL))?;
    let di = lookup(&t.datatype, gather(w, DATATYPE))?;
    let si = lookup(&t.subreg, gather(w, if imm { SUBREG_IMM } else { SUBREG }))?;
    let s0 = lookup(&t.src, gather(w, SRC0))?;
    cput(&mut c, 12, 8, ci);
    cput(&mut c, 17, 13, di);
    cput(&mut c, 22, 18, si);
    cput(&mut c, 34, 30, s0);
    move_to_compact(&mut c, w, MOVED);
    if imm {
        let v = get(w, Field { hi: 127, lo: 96 });
        let top = (v as i32) >> 12;
        if top != 0 && top != -1 {
            return None;
        }
        cput(&mut c, 39, 35, ((v >> 8) & 0x1F) as u64);
        cput(&mut c, 63, 56, (v & 0xFF) as u64);
    } else {
        if get(w, Field { hi: 127, lo: 121 }) != 0 {
            return None;
        }
        let s1 = lookup(&t.src, gather(w, SRC1))?;
        cput(&mut c, 39, 35, s1);
        cput(&mut c, 63, 56, get(w, Field { hi: 108, lo: 101 }) as u64);
    }
    Some(c)
}

/// Expands a compacted instruction to its native form. `offset` is for error messages.
pub fn uncompact(c: &[u8; 8], gen: Gen, offset: usize) -> Result<[u8; 16]> {
    uncompact_u64(u64::from_le_bytes(*c), gen, offset).map(u128::to_le_bytes)
}

/// [`uncompact`] on `u64`/`u128` values.
pub fn uncompact_u64(c: u64, gen: Gen, offset: usize) -> Result<u128> {
    let t = tables(gen);
    let err = |what: &str| IsaError::InvalidEncoding {
        offset,
        what: what.into(),
    };
    if cget(c, 29, 29) == 0 {
        return Err(err("compaction bit clear in a compacted instruction"));
    }
    let op = cget(c, 6, 0) as u32;
    let mut w = op as u128;
    let set = |w: &mut u128, hi: u32, lo: u32, v: u64| scatter(w, &[(hi, lo)], v);
    if is_three_src(op, gen) {
        if cget(c, 7, 7) != 0 || cget(c, 27, 19) != 0 {
            return Err(err("reserved compacted 3-src bits set"));
        }
        let ci = cget(c, 9, 8) as usize;
        let si = cget(c, 11, 10) as usize;
        scatter(&mut w, THREE_CONTROL, t.three_control[ci] as u64);
        scatter(&mut w, THREE_SOURCE, t.three_source[si]);
        move_to_native(&mut w, c, THREE_MOVED);
        move_to_native(&mut w, c, THREE_SUBREG);
        return Ok(w);
    }
    if cget(c, 28, 28) != 0 {
        return Err(err("reserved compacted bit 28 set"));
    }
    scatter(&mut w, CONTROL, t.control[cget(c, 12, 8) as usize] as u64);
    scatter(
        &mut w,
        DATATYPE,
        t.datatype[cget(c, 17, 13) as usize] as u64,
    );
    let imm = has_imm(w);
    let sub = t.subreg[cget(c, 22, 18) as usize] as u64;
    if imm {
        scatter(&mut w, SUBREG_IMM, sub & 0x3FF);
    } else {
        scatter(&mut w, SUBREG, sub);
    }
    scatter(&mut w, SRC0, t.src[cget(c, 34, 30) as usize] as u64);
    move_to_native(&mut w, c, MOVED);
    if imm {
        let v13 = (cget(c, 39, 35) << 8) | cget(c, 63, 56);
        let v = (((v13 as u32) << 19) as i32 >> 19) as u32;
        set(&mut w, 127, 96, v as u64);
    } else {
        scatter(&mut w, SRC1, t.src[cget(c, 39, 35) as usize] as u64);
        set(&mut w, 108, 101, cget(c, 63, 56));
    }
    Ok(w)
}

/// Mesa's meaning-preserving retyping that lets more instructions compact (F3.1):
/// with a 32-bit src0 immediate, src1's type field becomes UD; a `0.0F` immediate with an
/// F dst of stride 1 becomes `0VF`; D/D with a 13-bit immediate and no cond-mod becomes
/// UD/UD. Only applies to the Basic form.
pub fn precompact(i: &Instruction) -> Instruction {
    let mut i = *i;
    if let Operands::Basic {
        cond_mod,
        dst,
        src0: Src::Imm(imm),
        src1: Src::Unused { ty_hw, .. },
        ..
    } = &mut i.operands
    {
        *ty_hw = 0;
        if imm.bits == 0 && imm.ty == Type::F && dst.ty == Type::F && dst.hstride == 1 {
            imm.ty = Type::VF;
        }
        let v = imm.bits as u32 as i32;
        if imm.ty == Type::D
            && dst.ty == Type::D
            && *cond_mod == CondMod::None
            && (v >> 12 == 0 || v >> 12 == -1)
        {
            imm.ty = Type::UD;
            dst.ty = Type::UD;
        }
    }
    i
}
