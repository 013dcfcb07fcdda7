//! SEND/SENDC and SENDS/SENDSC rules: payload location, EOT register range, split-send
//! overlap, the r127 return restriction, and payload/response inside the register file.

use super::ctx::{Ctx, Loc, Shape};
use crate::model::*;

const GRFS: u32 = 128;

fn desc_fields(c: &Ctx) -> Option<DescFields> {
    match c.inst.operands {
        Operands::Send {
            desc: SendDesc::Imm(d),
            ..
        }
        | Operands::SplitSend {
            desc: SendDesc::Imm(d),
            ..
        } => Some(DescFields::from_desc(d)),
        _ => None,
    }
}

fn eot(c: &Ctx) -> bool {
    matches!(
        c.inst.operands,
        Operands::Send { eot: true, .. } | Operands::SplitSend { eot: true, .. }
    )
}

pub(super) fn src0_direct(c: &Ctx) -> Option<String> {
    let s = c.src(0).filter(|_| c.shape == Shape::Send)?;
    s.is_indirect().then(|| "indirect payload".into())
}

pub(super) fn src0_grf(c: &Ctx) -> Option<String> {
    let s = c.src(0).filter(|_| c.shape == Shape::Send)?;
    matches!(s.loc, Loc::Arf(_) | Loc::Imm).then(|| "payload is not in the GRF".into())
}

pub(super) fn eot_g112(c: &Ctx) -> Option<String> {
    if !eot(c) {
        return None;
    }
    match c.inst.operands {
        Operands::Send { .. } => {
            let n = c.src(0)?.grf()?;
            (n < 112).then(|| format!("EOT payload in g{n}"))
        }
        Operands::SplitSend { src0, src1, .. } => {
            if src0.file == RegFile::Grf && src0.nr < 112 {
                Some(format!("EOT payload in g{}", src0.nr))
            } else if src1.file == RegFile::Grf && src1.nr < 112 {
                Some(format!("EOT second payload in g{}", src1.nr))
            } else {
                None
            }
        }
        _ => None,
    }
}

pub(super) fn r127_overlap(c: &Ctx) -> Option<String> {
    if c.shape != Shape::Send {
        return None;
    }
    let f = desc_fields(c)?;
    let d = c.dst?.loc_grf()? as u32;
    let s = c.src(0)?.grf()? as u32;
    (d + f.rlen > 127 && s + f.mlen > d).then(|| {
        format!(
            "response g{d}+{} reaches r127 and overlaps payload g{s}+{}",
            f.rlen, f.mlen
        )
    })
}

pub(super) fn sends_src1(c: &Ctx) -> Option<String> {
    let Operands::SplitSend { src1, .. } = c.inst.operands else {
        return None;
    };
    (src1.file == RegFile::Arf && !src1.is_null())
        .then(|| format!("src1 is ARF register {}", src1.nr))
}

pub(super) fn sends_overlap(c: &Ctx) -> Option<String> {
    let Operands::SplitSend {
        src0,
        src1,
        desc,
        ex_desc,
        ..
    } = c.inst.operands
    else {
        return None;
    };
    if src0.file != RegFile::Grf || src1.file != RegFile::Grf {
        return None;
    }
    // Unknown (a0) lengths: at least one register each.
    let mlen = desc.imm().map_or(1, |d| DescFields::from_desc(d).mlen);
    let ex_mlen = ex_desc.ex_mlen().unwrap_or(1);
    let (a, b) = (src0.nr as u32, src1.nr as u32);
    ((a <= b && b < a + mlen) || (b <= a && a < b + ex_mlen))
        .then(|| format!("payload g{a}+{mlen} and g{b}+{ex_mlen} overlap"))
}

pub(super) fn payload_in_grf(c: &Ctx) -> Option<String> {
    let f = desc_fields(c)?;
    let (start, ex) = match c.inst.operands {
        Operands::Send { .. } => (c.src(0)?.grf()? as u32, None),
        Operands::SplitSend {
            src0,
            src1,
            ex_desc,
            ..
        } => {
            let ex = (src1.file == RegFile::Grf)
                .then(|| (src1.nr as u32, ex_desc.ex_mlen().unwrap_or(0)));
            (src0.nr as u32, ex)
        }
        _ => return None,
    };
    if start + f.mlen > GRFS {
        return Some(format!("payload g{start}+{} past g127", f.mlen));
    }
    let (s1, n1) = ex?;
    (s1 + n1 > GRFS).then(|| format!("second payload g{s1}+{n1} past g127"))
}

pub(super) fn response_in_grf(c: &Ctx) -> Option<String> {
    let f = desc_fields(c)?;
    let d = match c.inst.operands {
        Operands::Send { .. } => c.dst?.loc_grf()? as u32,
        Operands::SplitSend { dst, .. } if dst.file == RegFile::Grf => dst.nr as u32,
        _ => return None,
    };
    (d + f.rlen > GRFS).then(|| format!("response g{d}+{} past g127", f.rlen))
}

/// The rule tests' cases (see `testutil::all_cases`): for each rule of this file,
/// instructions that pass it and instructions that break it.
#[cfg(test)]
pub(super) mod rule_cases {
    use super::*;

    pub(in crate::validate) fn cases() -> Vec<crate::validate::testutil::Case> {
        use crate::validate::testutil::*;
        let indirect = {
            let mut i = send(10, 20, 1, 1, false);
            if let Operands::Send { src0, .. } = &mut i.operands {
                src0.addr = Addr::Indirect {
                    file: RegFile::Grf,
                    addr_subnr: 0,
                    imm: 0,
                };
            }
            i
        };
        let arf_payload = {
            let mut i = send(10, 20, 1, 1, false);
            if let Operands::Send { src0, .. } = &mut i.operands {
                src0.addr = Addr::arf(ArfReg::new(ArfKind::Acc, 0), 0);
            }
            i
        };
        let sends_arf = {
            let mut i = sends(20, 1, Some(30), 1, false);
            if let Operands::SplitSend { src1, .. } = &mut i.operands {
                src1.file = RegFile::Arf;
                src1.nr = ArfReg::new(ArfKind::Acc, 0).nr();
            }
            i
        };
        vec![
            case(
                "send.src0-direct",
                SKL,
                vec![send(10, 20, 1, 1, false)],
                vec![indirect],
            ),
            case(
                "send.src0-grf",
                SKL,
                vec![send(10, 20, 1, 1, false)],
                vec![arf_payload],
            ),
            case(
                "send.eot-g112",
                SKL,
                vec![
                    send(0, 112, 1, 0, true),
                    sends(120, 1, Some(124), 2, true),
                    sends(127, 1, None, 0, true),
                ],
                vec![
                    send(0, 20, 1, 0, true),
                    sends(120, 1, Some(30), 2, true),
                    sends(20, 1, Some(120), 2, true),
                ],
            ),
            case(
                "send.r127-overlap",
                SKL,
                vec![send(124, 20, 2, 4, false), send(126, 124, 2, 1, false)],
                vec![send(126, 124, 3, 2, false)],
            ),
            case(
                "sends.src1-grf-or-null",
                SKL,
                vec![
                    sends(20, 1, Some(30), 1, false),
                    sends(20, 1, None, 0, false),
                ],
                vec![sends_arf],
            ),
            case(
                "sends.no-overlap",
                SKL,
                vec![sends(20, 2, Some(22), 2, false)],
                vec![
                    sends(20, 3, Some(22), 2, false),
                    sends(22, 1, Some(20), 3, false),
                ],
            ),
            case(
                "send.payload-in-grf",
                SKL,
                vec![
                    send(10, 120, 8, 1, false),
                    sends(120, 4, Some(124), 4, false),
                ],
                vec![
                    send(10, 124, 8, 1, false),
                    sends(100, 4, Some(126), 4, false),
                ],
            ),
            case(
                "send.response-in-grf",
                SKL,
                vec![send(120, 10, 1, 8, false)],
                vec![send(124, 10, 1, 8, false)],
            ),
        ]
    }
}
