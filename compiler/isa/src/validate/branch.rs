//! Branch target sanity for IF ELSE ENDIF WHILE BREAK CONT HALT BRD BRC GOTO: JIP/UIP
//! must land on an instruction of the program (or its end).

use super::ctx::{Ctx, ProgPos};

/// (name, byte offset) of every jump offset the instruction carries.
fn targets(c: &Ctx) -> impl Iterator<Item = (&'static str, i32)> {
    let (jip, uip) = c.inst.branch_offsets().unwrap_or((0, None));
    let has = c.inst.branch_offsets().is_some();
    [("JIP", Some(jip)), ("UIP", uip)]
        .into_iter()
        .filter(move |_| has)
        .filter_map(|(n, o)| o.map(|o| (n, o)))
}

fn target(p: &ProgPos, off: i32) -> i64 {
    p.offset as i64 + off as i64
}

pub(super) fn in_program(c: &Ctx) -> Option<String> {
    let p = c.prog?;
    targets(c)
        .find(|(_, o)| {
            let t = target(&p, *o);
            t < 0 || t > p.end as i64
        })
        .map(|(n, o)| {
            format!(
                "{n} {o:+} from byte {} lands at {} outside 0..={}",
                p.offset,
                target(&p, o),
                p.end
            )
        })
}

pub(super) fn aligned(c: &Ctx) -> Option<String> {
    match c.prog {
        Some(p) => targets(c)
            .find(|(_, o)| {
                let t = target(&p, *o);
                t >= 0
                    && t <= p.end as i64
                    && t != p.end as i64
                    && p.offsets.binary_search(&(t as usize)).is_err()
            })
            .map(|(n, o)| {
                format!(
                    "{n} {o:+} lands inside an instruction (byte {})",
                    target(&p, o)
                )
            }),
        None => targets(c)
            .find(|(_, o)| o % 8 != 0)
            .map(|(n, o)| format!("{n} {o:+} is not a multiple of 8")),
    }
}

/// The rule tests' cases (see `testutil::all_cases`): for each rule of this file,
/// instructions that pass it and instructions that break it.
#[cfg(test)]
pub(super) mod rule_cases {
    pub(in crate::validate) fn cases() -> Vec<crate::validate::testutil::Case> {
        use crate::model::*;
        use crate::validate::testutil::*;
        let br = |op: Opcode, jip: i32, uip: i32| {
            Instruction::new(
                op,
                es(8),
                Operands::Branch {
                    dst: Dst::null(Type::D),
                    src0_file: RegFile::Imm,
                    src0_ty: Type::D,
                    jip,
                    uip,
                },
            )
        };
        let nop = || Instruction::new(Opcode::Nop, es(1), Operands::nop());
        let prog = |jip: i32, uip: i32| {
            vec![
                br(Opcode::If, jip, uip),
                nop(),
                br(Opcode::Endif, 16, 0x0800_0000),
            ]
        };
        vec![
            Case {
                rule: "branch.in-program",
                platform: SKL,
                // IF -> ENDIF (+32); ENDIF's JIP points at the program end.
                pass: vec![prog(32, 32)],
                fail: vec![prog(64, 32), prog(32, -16)],
            },
            Case {
                rule: "branch.aligned",
                platform: SKL,
                pass: vec![prog(16, 32)],
                fail: vec![prog(24, 32), prog(32, 40)],
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::model::*;
    use crate::validate::*;

    fn while_(jip: i32) -> Instruction {
        Instruction::new(
            Opcode::While,
            ExecSize::S8,
            Operands::Branch {
                dst: Dst::null(Type::D),
                src0_file: RegFile::Imm,
                src0_ty: Type::D,
                jip,
                uip: 0,
            },
        )
    }

    #[test]
    fn lone_branch_offsets_must_be_multiples_of_8() {
        assert!(validate_instruction(&while_(-64), 0, Gen::Gen9).is_empty());
        let v = validate_instruction(&while_(-60), 0, Gen::Gen9);
        assert_eq!(v.len(), 1, "{}", report(&v));
        assert_eq!(v[0].rule.id, "branch.aligned");
    }

    #[test]
    fn decoded_layout_targets_use_real_offsets() {
        // A compacted (8-byte) instruction between the WHILE and its target.
        let nop = Instruction::new(Opcode::Nop, ExecSize::S1, Operands::nop());
        let prog = [nop, nop, while_(-24)];
        let v = validate_program_at(&prog, &[0, 16, 24], 40, Gen::Gen9);
        assert!(v.is_empty(), "{}", report(&v));
        let bad = [nop, nop, while_(-16)];
        let v = validate_program_at(&bad, &[0, 16, 24], 40, Gen::Gen9);
        assert_eq!(v.len(), 1, "{}", report(&v));
        assert_eq!(v[0].rule.id, "branch.aligned");
    }
}
