//! Whole programs: decoding a byte stream, encoding a list of instructions with optional
//! compaction (fixing branch offsets as compaction moves instructions).

use crate::codec::{decode_native, encode_u128};
use crate::compact::{compact_u128, precompact, uncompact_u64};
use crate::disasm::ProgramInst;
use crate::error::{IsaError, Result};
use crate::model::*;

/// Decodes the instruction at `offset` of `bytes` (native or compacted, by bit 29).
/// Returns the instruction and its size in bytes (8 or 16).
pub fn decode_at(bytes: &[u8], offset: usize, gen: Gen) -> Result<(Instruction, usize)> {
    let rest = bytes.get(offset..).unwrap_or(&[]);
    if rest.len() < 8 {
        return Err(IsaError::Truncated {
            offset,
            needed: 8,
            available: rest.len(),
        });
    }
    if rest[3] & 0x20 != 0 {
        let c = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        let w = uncompact_u64(c, gen, offset)?;
        Ok((decode_native(w, gen, offset)?, 8))
    } else {
        if rest.len() < 16 {
            return Err(IsaError::Truncated {
                offset,
                needed: 16,
                available: rest.len(),
            });
        }
        let w = u128::from_le_bytes(rest[..16].try_into().expect("16 bytes"));
        Ok((decode_native(w, gen, offset)?, 16))
    }
}

/// Decodes the first instruction of `bytes`.
pub fn decode(bytes: &[u8], gen: Gen) -> Result<(Instruction, usize)> {
    decode_at(bytes, 0, gen)
}

/// Decodes a whole program. Branch offsets stay as encoded (real byte distances).
pub fn decode_program(bytes: &[u8], gen: Gen) -> Result<Vec<ProgramInst>> {
    let mut out = Vec::with_capacity(bytes.len() / 12);
    let mut off = 0;
    while off < bytes.len() {
        let (inst, n) = decode_at(bytes, off, gen)?;
        out.push(ProgramInst {
            offset: off,
            inst,
            compacted: n == 8,
        });
        off += n;
    }
    Ok(out)
}

/// Rewrites the branch offsets of a decoded program into the "native layout" convention
/// [`encode_program`] takes: every instruction counts 16 bytes. An offset that does not
/// land on an instruction start is rounded to the next instruction (or the end).
pub fn to_native_layout(prog: &[ProgramInst]) -> Vec<Instruction> {
    let index_of = |byte: i64| -> i64 {
        match prog.binary_search_by_key(&byte, |p| p.offset as i64) {
            Ok(i) => i as i64,
            Err(i) => i as i64,
        }
    };
    prog.iter()
        .enumerate()
        .map(|(k, p)| {
            let mut inst = p.inst;
            if let Operands::Branch { jip, uip, .. } = &mut inst.operands {
                let fix = |off: i32| -> i32 {
                    let t = p.offset as i64 + off as i64;
                    ((index_of(t) - k as i64) * 16) as i32
                };
                *jip = fix(*jip);
                if p.inst.opcode.has_uip() {
                    *uip = fix(*uip);
                }
            }
            inst
        })
        .collect()
}

/// Compacted NOP used to pad programs to a multiple of 16 bytes (F1.10).
pub const COMPACT_NOP: [u8; 8] = [0x7e, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00];

/// Encodes a program. Branch offsets (JIP/UIP) in `insts` are byte distances in the
/// *native layout* (16 bytes per instruction). With `compact`, every instruction that has
/// a compact form is compacted (if needed after Mesa's meaning-preserving [`precompact`]
/// retyping, which is kept only for instructions that then compact),
/// branch offsets are rewritten for the final positions, and the program is padded to a
/// multiple of 16 bytes with a compacted NOP.
pub fn encode_program(insts: &[Instruction], gen: Gen, compact: bool) -> Result<Vec<u8>> {
    let n = insts.len();
    if !compact {
        let mut out = Vec::with_capacity(n * 16);
        for i in insts {
            out.extend_from_slice(&encode_u128(i, gen)?.to_le_bytes());
        }
        return Ok(out);
    }
    // Targets as instruction indices (target may be n = end of program).
    let target = |k: usize, off: i32| -> i64 { k as i64 + (off as i64).div_euclid(16) };
    let mut is_compact = vec![false; n];
    let mut natives = Vec::with_capacity(n);
    for (k, i) in insts.iter().enumerate() {
        if let Some((jip, uip)) = i.branch_offsets() {
            if jip % 16 != 0 || uip.is_some_and(|u| u % 16 != 0) {
                return Err(IsaError::Unencodable {
                    opcode: i.opcode,
                    what: format!(
                        "instruction {k}: native-layout branch offsets must be multiples of 16"
                    ),
                });
            }
            natives.push(0);
            continue;
        }
        // Like Mesa, the retyped form is only kept when it actually compacts.
        let w = encode_u128(i, gen)?;
        let pw = encode_u128(&precompact(i), gen)?;
        if compact_u128(w, gen).is_some() {
            is_compact[k] = true;
            natives.push(w);
        } else if compact_u128(pw, gen).is_some() {
            is_compact[k] = true;
            natives.push(pw);
        } else {
            natives.push(w);
        }
    }
    // Branches: iterate layout -> offsets -> compactability. A branch may go from native
    // to compact, and back to native (never again) if a later layout breaks it.
    let mut banned = vec![false; n];
    let mut final_words = vec![0u128; n];
    for _round in 0..16 {
        let mut pos = vec![0i64; n + 1];
        for k in 0..n {
            pos[k + 1] = pos[k] + if is_compact[k] { 8 } else { 16 };
        }
        let at = |t: i64| -> i64 {
            if t < 0 {
                t * 16
            } else if t as usize > n {
                pos[n] + (t - n as i64) * 16
            } else {
                pos[t as usize]
            }
        };
        let mut changed = false;
        for k in 0..n {
            let mut i = insts[k];
            if let Operands::Branch { jip, uip, .. } = &mut i.operands {
                let has_uip = insts[k].opcode.has_uip();
                *jip = (at(target(k, *jip)) - pos[k]) as i32;
                if has_uip {
                    *uip = (at(target(k, *uip)) - pos[k]) as i32;
                }
                let w = encode_u128(&i, gen)?;
                final_words[k] = w;
                let can = !banned[k] && compact_u128(w, gen).is_some();
                if can != is_compact[k] {
                    if is_compact[k] {
                        banned[k] = true;
                    }
                    is_compact[k] = can;
                    changed = true;
                }
            } else {
                final_words[k] = natives[k];
            }
        }
        if !changed {
            let mut out = Vec::with_capacity(pos[n] as usize + 8);
            for k in 0..n {
                if is_compact[k] {
                    let c = compact_u128(final_words[k], gen).expect("checked compactable");
                    out.extend_from_slice(&c.to_le_bytes());
                } else {
                    out.extend_from_slice(&final_words[k].to_le_bytes());
                }
            }
            if out.len() % 16 != 0 {
                out.extend_from_slice(&COMPACT_NOP);
            }
            return Ok(out);
        }
    }
    // No fixpoint after 16 rounds (pathological): encode natively, which is always valid.
    log::warn!("encode_program: compaction layout did not converge; emitting native code");
    encode_program(insts, gen, false)
}
