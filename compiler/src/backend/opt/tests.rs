use super::*;
use crate::backend::lir::Builder;

fn text(p: &Program) -> String {
    p.to_string()
}

#[test]
fn dce_removes_unread_components_and_their_inputs() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let id = b.vreg(Type::D, 3);
    let t = b.vreg(Type::D, 1);
    b.alu2(Opcode::Add, t, Opnd::g(0, 4, Type::D, 0), Opnd::d(1));
    // Components x, y and z; only x is read.
    b.mov(id, t);
    b.alu2(Opcode::Mul, id.offset(64), t, Opnd::d(2));
    b.alu2(Opcode::Mul, id.offset(128), t, Opnd::d(3));
    let a = b.vreg(Type::UD, 1);
    b.alu2(Opcode::Shl, a, id.retype(Type::UD), Opnd::ud(2));
    let data = b.vreg(Type::UD, 1);
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 64,
        },
        Opnd::null(Type::UD),
        vec![a, data],
    );
    let before = text(&p);
    assert!(dce(&mut p));
    let after = text(&p);
    assert_eq!(before.lines().count() - 2, after.lines().count(), "{after}");
    assert!(
        !after.contains("mul"),
        "the y and z components are gone:\n{after}"
    );
    assert!(after.contains("add") && after.contains("mov") && after.contains("shl"));
    assert!(!dce(&mut p), "a second run finds nothing");
}

/// A table gather reads its index by its region and its table as the table: the unread
/// components of the index's register and the words past the table go; the table's rows
/// stay.
#[test]
fn dce_reads_a_gather_index_by_its_region() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let id = b.vreg(Type::UD, 3);
    // Index x (read), y and z (unread).
    b.mov(id, Opnd::g(0, 4, Type::UD, 0));
    b.mov(id.offset(64), Opnd::ud(2));
    b.mov(id.offset(128), Opnd::ud(3));
    // A table of two rows, both read by the gather; a third row past it.
    let table = b.vreg(Type::UD, 3);
    b.mov(table, Opnd::ud(7));
    b.mov(table.offset(64), Opnd::ud(8));
    b.mov(table.offset(128), Opnd::ud(9));
    let lanes = b.vreg(Type::UW, 1);
    b.mov(lanes, Opnd::imm(Type::UW, 0));
    let dst = b.vreg(Type::UD, 1);
    b.inst(
        LOp::Shuffle {
            width: 16,
            lanes: crate::backend::lir::Lanes::Table {
                count: 2,
                shift: 6,
                own: true,
            },
        },
        dst,
        vec![table, id, lanes],
    );
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 64,
        },
        Opnd::null(Type::UD),
        vec![dst, dst],
    );
    let before = text(&p);
    assert!(dce(&mut p), "{before}");
    let after = text(&p);
    // y, z and the third row go.
    assert_eq!(before.lines().count() - 3, after.lines().count(), "{after}");
    assert!(
        after.contains("0x7:UD") && after.contains("0x8:UD"),
        "{after}"
    );
    assert!(
        !after.contains("0x9:UD") && !after.contains("0x3:UD"),
        "{after}"
    );
}

#[test]
fn dce_follows_chains_and_ignores_self_reads() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let x = b.vreg(Type::D, 1);
    let y = b.vreg(Type::D, 1);
    b.mov(x, Opnd::d(5));
    b.alu2(Opcode::Add, x, x, Opnd::d(1)); // x = x + 1, read by nobody else
    b.alu2(Opcode::Add, y, x, Opnd::d(2)); // unread
                                           // A flag write stays even though its destination is unread.
    b.cmp(CondMod::G, y, x, Opnd::d(0));
    let before = text(&p);
    assert!(dce(&mut p), "{before}");
    let after = text(&p);
    assert_eq!(
        after.lines().count(),
        3,
        "only the unread add goes:\n{after}"
    );
    assert!(after.contains("cmp"));
}

#[test]
fn dce_keeps_writes_read_by_a_message_payload() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let payload = b.vreg(Type::UD, 2);
    b.mov(payload, Opnd::ud(1));
    b.mov(payload.offset(32), Opnd::ud(2));
    // The send names only the first register of its two-register payload.
    b.inst(
        LOp::Send {
            sfid: ferrite_isa::Sfid::DpSampler,
            desc: 0,
            ex_desc: 0,
            mlen: 2,
            ex_mlen: 0,
            rlen: 0,
            eot: false,
            indirect: false,
        },
        Opnd::null(Type::UD),
        vec![payload.scalar()],
    );
    assert!(!dce(&mut p), "{p}");
    assert_eq!(p.insts.len(), 3);
}

#[test]
fn payload_copy_is_read_from_the_payload_register() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let c = b.vreg(Type::F, 1);
    let x = b.vreg(Type::F, 1);
    let y = b.vreg(Type::F, 1);
    b.mov(c, Opnd::g(1, 4, Type::F, 0));
    b.alu2(Opcode::Mul, y, c.negate(), x);
    b.inst(LOp::Eot, Opnd::null(Type::UD), vec![y]);
    assert!(propagate_payload_copies(&mut p, 3));
    let after = text(&p);
    assert!(
        after.contains("mul(16@0) v2+0<1>:F, -g1+4<0>:F, v1+0<1>:F"),
        "{after}"
    );
    assert!(dce(&mut p));
    assert_eq!(p.insts.len(), 2, "the copy is dead:\n{p}");
}

#[test]
fn copies_of_allocatable_or_rewritten_registers_are_kept() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let c = b.vreg(Type::D, 1);
    let d = b.vreg(Type::D, 1);
    let y = b.vreg(Type::D, 1);
    // g5 is past the payload; d is written twice.
    b.mov(c, Opnd::g(5, 0, Type::D, 0));
    b.mov(d, Opnd::g(1, 0, Type::D, 0));
    b.alu2(Opcode::Add, d, d, Opnd::d(1));
    b.alu2(Opcode::Add, y, c, d);
    assert!(!propagate_payload_copies(&mut p, 3), "{p}");
}

#[test]
fn copies_of_a_stable_register_are_read_from_it() {
    // A SIMD16 DF value repacked in two SIMD8 pieces, then copied per piece.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let raw = b.vreg(Type::UD, 2);
    let packed = b.vreg(Type::UQ, 1);
    let val = b.vreg(Type::DF, 1);
    let out = b.vreg(Type::DF, 1);
    // Each instruction is split into its pieces in turn.
    for q in 0..2u8 {
        let o = u32::from(q) * 32;
        b.at(8, 8 * q, false).mov(
            Opnd {
                stride: 2,
                ..packed.retype(Type::UD).offset(2 * o)
            },
            raw.offset(o),
        );
    }
    for q in 0..2u8 {
        let o = u32::from(q) * 64;
        b.at(8, 8 * q, false)
            .mov(val.retype(Type::UQ).offset(o), packed.offset(o));
    }
    for q in 0..2u8 {
        let o = u32::from(q) * 64;
        b.at(8, 8 * q, false)
            .alu2(Opcode::Add, out.offset(o), val.offset(o), val.offset(o));
    }
    let before = p.to_string();
    assert!(propagate_copies(&mut p), "{before}");
    assert_eq!(
        body(&p),
        [
            "mov(8@0) v1+0<2>:UD, v0+0<1>:UD",
            "mov(8@8) v1+64<2>:UD, v0+32<1>:UD",
            "add(8@0) v3+0<1>:DF, v1+0<1>:DF, v1+0<1>:DF",
            "add(8@8) v3+64<1>:DF, v1+64<1>:DF, v1+64<1>:DF",
        ],
        "before:\n{before}"
    );
    assert!(!propagate_copies(&mut p));
}

#[test]
fn chains_of_copies_and_offsets_collapse() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let a = b.vreg(Type::D, 2);
    let c = b.vreg(Type::UD, 1);
    let e = b.vreg(Type::D, 1);
    let r = b.vreg(Type::D, 1);
    b.alu2(
        Opcode::Add,
        a.offset(32),
        Opnd::g(2, 0, Type::D, 1),
        Opnd::d(1),
    );
    b.mov(c, a.retype(Type::UD).offset(32));
    b.mov(e, c.retype(Type::D));
    b.alu2(Opcode::Mul, r, e.negate(), Opnd::d(3));
    assert!(propagate_copies(&mut p));
    assert_eq!(
        body(&p),
        [
            "add(8@0) v0+32<1>:D, g2+0<1>:D, 0x1:D",
            "mul(8@0) v3+0<1>:D, -v0+32<1>:D, 0x3:D",
        ]
    );
}

#[test]
fn copies_that_may_see_another_value_stay() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (s, d, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    // s is written again after the copy.
    b.mov(s, Opnd::d(1));
    b.mov(d, s);
    b.alu2(Opcode::Add, s, s, Opnd::d(1));
    b.alu2(Opcode::Add, r, d, s);
    // The copy runs in a loop that also writes its source.
    let (s2, d2) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.mov(s2, Opnd::d(0));
    b.control(LOp::Do);
    b.mov(d2, s2);
    b.alu2(Opcode::Add, s2, r, Opnd::d(2));
    b.alu2(Opcode::Add, r, d2, r);
    b.control(LOp::While);
    // A conversion, a predicated copy, a copy read by a message, and a copy from two
    // different sources.
    let (f, g, h, m, n) = (
        b.vreg(Type::F, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
    );
    b.mov(f, r);
    b.mov(g, r).pred = Some(P);
    b.mov(h, r);
    b.mov(m, r);
    b.mov(m, s);
    b.mov(n, r);
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 32,
        },
        Opnd::null(Type::UD),
        vec![n, h],
    );
    b.alu2(Opcode::Add, r, f.retype(Type::D), g);
    b.alu2(Opcode::Add, r, m, h);
    let before = body(&p);
    assert!(!propagate_copies(&mut p), "{before:#?}");
}

/// A SIMD32 vector load is two SIMD16 messages, each of whose responses holds its half
/// of every component back to back; the value keeps a component's two halves together, so
/// lowering copies each response's parts into it. Every read of the value lies in one
/// part and is read from that response instead: no copy is left.
#[test]
fn a_simd32_load_is_read_from_its_two_responses() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 32);
    let addr = b.vreg(Type::UD, 1);
    b.alu2(Opcode::Shl, addr, Opnd::g(2, 0, Type::UD, 1), Opnd::ud(4));
    let val = b.vreg(Type::F, 4);
    b.inst(
        LOp::UntypedRead {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 4,
            comp_stride: 128,
        },
        val,
        vec![addr],
    );
    let sum = b.vreg(Type::F, 1);
    b.alu2(Opcode::Add, sum, val, val.offset(128));
    b.alu2(Opcode::Mul, sum, sum, val.offset(384));
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(1),
            comps: 1,
            comp_stride: 128,
        },
        Opnd::null(Type::UD),
        vec![addr, sum],
    );
    crate::backend::lower::lower_simd_width(&mut p);
    crate::backend::lower::lower_sends(&mut p);
    let before = body(&p);
    assert_eq!(
        before.iter().filter(|l| l.starts_with("mov(")).count(),
        8,
        "{before:#?}"
    );
    assert!(propagate_copies(&mut p), "{before:#?}");
    let after = body(&p);
    assert!(!after.iter().any(|l| l.starts_with("mov(")), "{after:#?}");
    // The responses are v3 (first half) and v4 (second half), component c at byte 64c.
    let reads: Vec<&String> = after.iter().filter(|l| !l.starts_with("Send")).collect();
    assert_eq!(
        reads,
        [
            "shl(16@0) v0+0<1>:UD, g2+0<1>:UD, 0x4:UD",
            "shl(16@16) v0+64<1>:UD, g2+64<1>:UD, 0x4:UD",
            "add(16@0) v2+0<1>:F, v3+0<1>:F, v3+64<1>:F",
            "add(16@16) v2+64<1>:F, v4+0<1>:F, v4+64<1>:F",
            "mul(16@0) v2+0<1>:F, v2+0<1>:F, v3+192<1>:F",
            "mul(16@16) v2+64<1>:F, v2+64<1>:F, v4+192<1>:F",
        ],
        "{after:#?}"
    );
    assert!(!propagate_copies(&mut p));
}

/// A register copied from two sources into separate bytes keeps its copies when one read
/// spans bytes of both (or bytes neither wrote): no one register holds what it reads.
#[test]
fn a_read_across_two_copied_sources_keeps_the_copies() {
    for (off, exec) in [(32u32, 16u8), (128, 8)] {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let (s1, s2) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        let d = b.vreg(Type::D, 3);
        let r = b.vreg(Type::D, 1);
        b.alu2(Opcode::Add, s1, Opnd::g(2, 0, Type::D, 1), Opnd::d(1));
        b.alu2(Opcode::Add, s2, Opnd::g(4, 0, Type::D, 1), Opnd::d(2));
        b.mov(d, s1);
        b.mov(d.offset(64), s2);
        b.at(exec, 0, false)
            .alu2(Opcode::Add, r, d.offset(off), Opnd::d(3));
        let before = body(&p);
        assert!(!propagate_copies(&mut p), "{before:#?}");
    }
}

#[test]
fn a_copy_after_its_sources_loop_is_propagated() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (s, d, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.mov(s, Opnd::d(0));
    b.control(LOp::Do);
    b.alu2(Opcode::Add, s, s, Opnd::d(1));
    b.control(LOp::While);
    b.control(LOp::Do);
    b.mov(d, s);
    b.alu2(Opcode::Add, r, d, r);
    b.control(LOp::While);
    assert!(propagate_copies(&mut p));
    assert_eq!(body(&p)[5], "add(8@0) v2+0<1>:D, v0+0<1>:D, v2+0<1>:D");
    assert_eq!(p.insts.len(), 7);
}

/// A read through rows (`<4;4,0>`) of a copied register is rewritten to the copy's source
/// with its rows kept; a move whose source reads rows is not a byte copy, so its
/// destination keeps it.
#[test]
fn copies_carry_rows_regions_and_rows_reads_are_not_copies() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let (s, d, r, q) = (
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
    );
    b.alu2(Opcode::Add, s, Opnd::g(2, 0, Type::D, 1), Opnd::d(1));
    b.mov(d, s);
    b.mov(r, d.offset(12).scalar().with_rows(4, 4));
    b.alu2(Opcode::Add, q, r, r);
    assert!(propagate_copies(&mut p));
    assert_eq!(
        body(&p),
        [
            "add(16@0) v0+0<1>:D, g2+0<1>:D, 0x1:D",
            "mov(16@0) v2+0<1>:D, v0+12<4;4,0>:D",
            "add(16@0) v3+0<1>:D, v2+0<1>:D, v2+0<1>:D",
        ]
    );
    assert!(!propagate_copies(&mut p));
}

fn body(p: &Program) -> Vec<String> {
    p.insts.iter().map(|i| i.to_string()).collect()
}

const P: Pred = Pred {
    flag_sub: 0,
    inverse: false,
};

#[test]
fn identical_constant_moves_in_a_block_share_one_register() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, y) = (b.vreg(Type::DF, 1), b.vreg(Type::DF, 1));
    let (c0, c1, c2, c3) = (
        b.vreg(Type::DF, 1),
        b.vreg(Type::DF, 1),
        b.vreg(Type::DF, 1),
        b.vreg(Type::DF, 1),
    );
    let one = Opnd::imm(Type::DF, 1f64.to_bits());
    b.mov(c0, one);
    b.alu2(Opcode::Add, x, x, c0);
    b.mov(c1, one);
    b.alu2(Opcode::Add, y, y, c1);
    // Another channel group: its own constant.
    b.at(8, 8, false).mov(c2, one);
    b.at(8, 8, false).alu2(Opcode::Add, y, y, c2);
    // After control flow the mask may differ.
    b.control(LOp::If).pred = Some(P);
    b.mov(c3, one);
    b.alu2(Opcode::Mul, x, x, c3);
    b.control(LOp::Endif);
    let before = body(&p);
    assert!(reuse_constants(&mut p), "{before:#?}");
    assert_eq!(
        body(&p),
        [
            "mov(8@0) v2+0<1>:DF, 0x3ff0000000000000:DF",
            "add(8@0) v0+0<1>:DF, v0+0<1>:DF, v2+0<1>:DF",
            "add(8@0) v1+0<1>:DF, v1+0<1>:DF, v2+0<1>:DF",
            "mov(8@8) v4+0<1>:DF, 0x3ff0000000000000:DF",
            "add(8@8) v1+0<1>:DF, v1+0<1>:DF, v4+0<1>:DF",
            "(+f0.0) If(8@0) null<1>:D",
            "mov(8@0) v5+0<1>:DF, 0x3ff0000000000000:DF",
            "mul(8@0) v0+0<1>:DF, v0+0<1>:DF, v5+0<1>:DF",
            "Endif(8@0) null<1>:D",
        ],
        "before: {before:#?}"
    );
    assert!(!reuse_constants(&mut p));
}

#[test]
fn constants_rewritten_predicated_or_far_apart_are_not_shared() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, c0, c1, c2, c3) = (
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
    );
    // c0 is written twice; c1 under a predicate.
    b.mov(c0, Opnd::d(7));
    b.alu2(Opcode::Add, c0, c0, x);
    b.mov(c1, Opnd::d(7)).pred = Some(P);
    b.mov(c2, Opnd::d(7));
    for _ in 0..CONSTANT_REUSE_WINDOW {
        b.alu2(Opcode::Add, x, x, c2);
    }
    b.mov(c3, Opnd::d(7));
    b.alu2(Opcode::Add, x, c1, c3);
    let before = body(&p);
    assert!(!reuse_constants(&mut p), "{before:#?}");
}

/// An untyped write of the constant 0 to address 0 (specop_compare's first store): the
/// address and the data are the same constant, but a split send's two payloads must not
/// overlap, so the payload registers keep their own moves.
#[test]
fn constants_a_message_reads_keep_their_own_register() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, addr, data) = (
        b.vreg(Type::UD, 1),
        b.vreg(Type::UD, 1),
        b.vreg(Type::UD, 1),
    );
    b.mov(x, Opnd::ud(0));
    b.mov(addr, Opnd::ud(0));
    b.mov(data, Opnd::ud(0));
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 32,
        },
        Opnd::null(Type::UD),
        vec![addr, data],
    );
    b.alu2(Opcode::Add, x, x, x);
    let before = body(&p);
    assert!(!reuse_constants(&mut p), "{before:#?}");
}

#[test]
fn flag_move_after_its_cmp_goes_and_the_unread_cmp_writes_null() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let x = b.vreg(Type::UD, 1);
    let c = b.vreg(Type::D, 1);
    b.cmp(CondMod::Ge, c.retype(Type::UD), x, Opnd::ud(4));
    b.flag_from(c);
    b.control(LOp::If).pred = Some(P);
    b.control(LOp::Endif);
    let before = body(&p);
    assert_eq!(before[1], "mov.nz.f0.0(16@0) null<1>:D, v1+0<1>:D");
    assert!(fold_flag_moves(&mut p));
    assert_eq!(
        body(&p),
        [
            "cmp.ge.f0.0(16@0) null<1>:UD, v0+0<1>:UD, 0x4:UD",
            "(+f0.0) If(16@0) null<1>:D",
            "Endif(16@0) null<1>:D",
        ],
        "before: {before:#?}"
    );
    assert!(!fold_flag_moves(&mut p));
}

#[test]
fn flag_move_of_a_64_bit_compare_copy_goes() {
    // `wide::cmp64`: a DF compare into a qword temporary, its low dwords copied out, then
    // the branch's flag move. The compare already set the flag; with a flag write in
    // between (second program) the move stays.
    for between in [false, true] {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let (x, y) = (b.vreg(Type::DF, 1), b.vreg(Type::DF, 1));
        let t = b.vreg(Type::DF, 1);
        let d = b.vreg(Type::UD, 1);
        b.cmp(CondMod::L, t, x, y);
        let lo = Opnd {
            ty: Type::UD,
            stride: t.stride * 2,
            ..t
        };
        b.mov(d, lo);
        if between {
            let u = b.vreg(Type::D, 1);
            b.cmp(CondMod::Z, u, d.retype(Type::D), Opnd::d(3));
        }
        b.flag_from(d);
        b.control(LOp::If).pred = Some(P);
        b.control(LOp::Endif);
        let before = body(&p);
        assert_eq!(fold_flag_moves(&mut p), !between, "{before:#?}");
        let moves = body(&p).iter().filter(|l| l.starts_with("mov.nz")).count();
        assert_eq!(moves, usize::from(between), "{:#?}", body(&p));
    }
}

#[test]
fn flag_move_stays_when_the_flag_was_rewritten_or_the_block_changed() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let x = b.vreg(Type::D, 1);
    let c = b.vreg(Type::D, 1);
    let t = b.vreg(Type::D, 1);
    b.cmp(CondMod::L, c, x, Opnd::d(0));
    // Another comparison writes the flag in between.
    b.cmp(CondMod::G, t, x, Opnd::d(9));
    b.flag_from(c);
    b.control(LOp::If).pred = Some(P);
    // A move in a nested block: the channel mask differs from the cmp's.
    b.flag_from(t);
    b.control(LOp::Endif);
    // The cmp is at exec size 1: it set only channel 0's flag.
    let u = b.vreg(Type::D, 1);
    b.at(1, 0, true)
        .cmp(CondMod::Z, u.scalar(), x.scalar(), Opnd::d(1));
    b.flag_from(u.scalar());
    let before = body(&p);
    assert!(!fold_flag_moves(&mut p), "{before:#?}");
    // The mov.nz of a scalar region is not a flag move of a register (stride 0).
    assert_eq!(body(&p), before);
}

#[test]
fn second_flag_move_of_the_same_value_is_redundant() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let c = b.vreg(Type::D, 1);
    let (d0, d1) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.mov(c, Opnd::g(1, 0, Type::D, 0));
    b.flag_from(c);
    b.alu2(Opcode::Sel, d0, Opnd::g(1, 4, Type::D, 0), Opnd::d(1))
        .pred = Some(P);
    b.flag_from(c);
    b.alu2(Opcode::Sel, d1, Opnd::g(1, 8, Type::D, 0), Opnd::d(2))
        .pred = Some(P);
    assert!(fold_flag_moves(&mut p));
    let after = body(&p);
    assert_eq!(after.len(), 4, "{after:#?}");
    assert_eq!(
        after.iter().filter(|l| l.starts_with("mov.nz")).count(),
        1,
        "{after:#?}"
    );
}

#[test]
fn flag_move_folds_into_the_logic_op_that_computed_it() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (a, c, d) = (b.vreg(Type::F, 1), b.vreg(Type::F, 1), b.vreg(Type::UD, 1));
    let t = b.vreg(Type::F, 1);
    b.cmp(CondMod::L, t, a, c);
    let t2 = b.vreg(Type::F, 1);
    b.cmp(CondMod::G, t2, a, c);
    b.alu2(Opcode::Or, d, t.retype(Type::UD), t2.retype(Type::UD));
    b.flag_from(d);
    b.control(LOp::If).pred = Some(P);
    b.control(LOp::Endif);
    assert!(fold_flag_moves(&mut p));
    let after = body(&p);
    assert_eq!(after.len(), 5, "{after:#?}");
    assert_eq!(
        after[2],
        "or.nz.f0.0(8@0) v2+0<1>:UD, v3+0<1>:UD, v4+0<1>:UD"
    );
}

#[test]
fn flag_move_does_not_fold_past_a_flag_read() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, y, d, e) = (
        b.vreg(Type::UD, 1),
        b.vreg(Type::UD, 1),
        b.vreg(Type::UD, 1),
        b.vreg(Type::UD, 1),
    );
    b.alu2(Opcode::And, d, x, y);
    // Reads the flag an earlier instruction set: `and.nz` would change what it sees.
    b.mov(e, x).pred = Some(P);
    b.flag_from(d);
    let before = body(&p);
    assert!(!fold_flag_moves(&mut p), "{before:#?}");
}

#[test]
fn conditional_break_becomes_a_predicated_break() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let (i, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.mov(i, Opnd::d(0));
    b.control(LOp::Do);
    b.cmp(CondMod::Ge, Opnd::null(Type::D), i, Opnd::d(10));
    b.control(LOp::If).pred = Some(P);
    b.mov(r, i);
    b.control(LOp::Break);
    b.control(LOp::Endif);
    b.alu2(Opcode::Add, i, i, Opnd::d(1));
    b.control(LOp::While);
    assert!(predicate_jumps(&mut p));
    assert_eq!(
        body(&p),
        [
            "mov(16@0) v0+0<1>:D, 0x0:D",
            "Do(16@0) null<1>:D",
            "cmp.ge.f0.0(16@0) null<1>:D, v0+0<1>:D, 0xa:D",
            "(+f0.0) mov(16@0) v1+0<1>:D, v0+0<1>:D",
            "(+f0.0) Break(16@0) null<1>:D",
            "add(16@0) v0+0<1>:D, v0+0<1>:D, 0x1:D",
            "While(16@0) null<1>:D",
        ]
    );
}

#[test]
fn jumps_after_other_work_or_with_an_else_keep_their_if() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (i, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.control(LOp::Do);
    b.control(LOp::If).pred = Some(P);
    // A message before the jump cannot be predicated here.
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 32,
        },
        Opnd::null(Type::UD),
        vec![i, r],
    );
    b.control(LOp::Break);
    b.control(LOp::Endif);
    b.control(LOp::If).pred = Some(P);
    b.control(LOp::Cont);
    b.control(LOp::Else);
    b.control(LOp::Break);
    b.control(LOp::Endif);
    b.control(LOp::While);
    let before = body(&p);
    assert!(!predicate_jumps(&mut p), "{before:#?}");
}

#[test]
fn small_if_else_becomes_predicated_code_and_a_sel() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let (x, y, r, t) = (
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
    );
    b.cmp(
        CondMod::Ge,
        Opnd::null(Type::UD),
        x.retype(Type::UD),
        Opnd::ud(1),
    );
    b.control(LOp::If).pred = Some(P);
    b.alu2(Opcode::Add, t, x, y);
    b.mov(r, t);
    b.control(LOp::Else);
    b.mov(r, y);
    b.control(LOp::Endif);
    b.alu2(Opcode::Add, x, r, Opnd::d(1));
    assert!(flatten_ifs(&mut p));
    assert_eq!(
        body(&p),
        [
            "cmp.ge.f0.0(16@0) null<1>:UD, v0+0<1>:UD, 0x1:UD",
            "(+f0.0) add(16@0) v3+0<1>:D, v0+0<1>:D, v1+0<1>:D",
            "(+f0.0) sel(16@0) v2+0<1>:D, v3+0<1>:D, v1+0<1>:D",
            "add(16@0) v0+0<1>:D, v2+0<1>:D, 0x1:D",
        ]
    );
    assert!(!flatten_ifs(&mut p));
}

#[test]
fn if_without_else_keeps_its_moves_predicated() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r) = (b.vreg(Type::F, 1), b.vreg(Type::F, 1));
    b.mov(r, Opnd::imm(Type::F, 0));
    b.control(LOp::If).pred = Some(Pred {
        flag_sub: 0,
        inverse: true,
    });
    b.math(ferrite_isa::MathFunction::Sqrt, r, vec![x]);
    b.control(LOp::Endif);
    assert!(flatten_ifs(&mut p));
    assert_eq!(
        body(&p),
        [
            "mov(8@0) v1+0<1>:F, 0x0:F",
            "(-f0.0) math.sqrt(8@0) v1+0<1>:F, v0+0<1>:F",
        ]
    );
}

#[test]
fn ifs_with_messages_flag_writes_or_long_arms_stay() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.control(LOp::If).pred = Some(P);
    b.inst(
        LOp::UntypedRead {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 32,
        },
        r,
        vec![x],
    );
    b.control(LOp::Endif);
    b.control(LOp::If).pred = Some(P);
    b.cmp(CondMod::Z, r, x, Opnd::d(0));
    b.control(LOp::Endif);
    b.control(LOp::If).pred = Some(P);
    for _ in 0..=MAX_FLATTENED_ARM {
        b.alu2(Opcode::Add, r, r, x);
    }
    b.control(LOp::Endif);
    // A sel reads the flag as its selector.
    b.control(LOp::If).pred = Some(P);
    b.alu2(Opcode::Sel, r, r, x).cmod = CondMod::None;
    b.control(LOp::Endif);
    // Uniform (exec size 1, WE_all) code runs whatever the mask.
    b.control(LOp::If).pred = Some(P);
    b.at(1, 0, true).mov(r.scalar(), x.scalar());
    b.control(LOp::Endif);
    let before = body(&p);
    assert!(!flatten_ifs(&mut p), "{before:#?}");
}

#[test]
fn copies_are_not_merged_across_a_clobbered_source() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (a, r, y) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.control(LOp::If).pred = Some(P);
    b.mov(r, a);
    b.alu2(Opcode::Add, a, a, Opnd::d(1));
    b.control(LOp::Else);
    b.mov(r, y);
    b.control(LOp::Endif);
    assert!(flatten_ifs(&mut p));
    assert_eq!(
        body(&p),
        [
            "(+f0.0) mov(8@0) v1+0<1>:D, v0+0<1>:D",
            "(+f0.0) add(8@0) v0+0<1>:D, v0+0<1>:D, 0x1:D",
            "(-f0.0) mov(8@0) v1+0<1>:D, v2+0<1>:D",
        ]
    );
}

#[test]
fn if_arm_values_are_written_into_the_if_result() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 16);
    let (x, y, r, t, u) = (
        b.vreg(Type::F, 1),
        b.vreg(Type::F, 1),
        b.vreg(Type::F, 1),
        b.vreg(Type::F, 1),
        b.vreg(Type::F, 1),
    );
    b.control(LOp::If).pred = Some(P);
    b.math(ferrite_isa::MathFunction::Sqrt, t, vec![x]);
    b.mov(r, t);
    b.control(LOp::Else);
    b.alu2(Opcode::Add, u, x, y);
    b.alu2(Opcode::Mul, u, u, y);
    b.mov(r, u);
    b.control(LOp::Endif);
    b.alu2(Opcode::Add, x, r, y);
    assert!(coalesce_copies(&mut p));
    assert_eq!(
        body(&p),
        [
            "(+f0.0) If(16@0) null<1>:D",
            "math.sqrt(16@0) v2+0<1>:F, v0+0<1>:F",
            "Else(16@0) null<1>:D",
            "add(16@0) v2+0<1>:F, v0+0<1>:F, v1+0<1>:F",
            "mul(16@0) v2+0<1>:F, v2+0<1>:F, v1+0<1>:F",
            "Endif(16@0) null<1>:D",
            "add(16@0) v0+0<1>:F, v2+0<1>:F, v1+0<1>:F",
        ]
    );
    assert!(!coalesce_copies(&mut p));
}

#[test]
fn nested_if_results_and_break_arguments_coalesce() {
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, inner, outer, res) = (
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
    );
    b.control(LOp::Do);
    b.control(LOp::If).pred = Some(P);
    b.alu2(Opcode::Add, inner, x, Opnd::d(1));
    b.control(LOp::Else);
    b.alu2(Opcode::Add, inner, x, Opnd::d(2));
    b.control(LOp::Endif);
    b.mov(outer, inner);
    b.mov(res, outer);
    b.control(LOp::Break);
    b.control(LOp::While);
    b.alu2(Opcode::Add, x, res, Opnd::d(3));
    assert!(coalesce_copies(&mut p));
    let after = body(&p);
    assert!(!after.iter().any(|l| l.starts_with("mov")), "{after:#?}");
    assert_eq!(after.len(), 9, "{after:#?}");
}

#[test]
fn copies_stay_where_the_result_is_live_or_a_channel_may_skip_them() {
    // The result is read between the value's write and the copy.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r, t) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.alu2(Opcode::Add, t, x, Opnd::d(1));
    b.alu2(Opcode::Add, x, r, Opnd::d(1));
    b.mov(r, t);
    assert!(!coalesce_copies(&mut p));
    // The copy runs on fewer channels than the write (inside an `if`).
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r, t) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.alu2(Opcode::Add, t, x, Opnd::d(1));
    b.control(LOp::If).pred = Some(P);
    b.mov(r, t);
    b.control(LOp::Endif);
    assert!(!coalesce_copies(&mut p));
    // Channels that break between the write and the copy keep the old result.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r, t) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.mov(r, Opnd::d(0));
    b.control(LOp::Do);
    b.alu2(Opcode::Add, t, x, Opnd::d(1));
    b.control(LOp::Break).pred = Some(P);
    b.mov(r, t);
    b.control(LOp::While);
    b.alu2(Opcode::Add, x, r, Opnd::d(1));
    assert!(!coalesce_copies(&mut p));
    // The value is written in a loop the copy follows, and the loop reads the result
    // before the write: the body runs again.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r, t) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.mov(r, Opnd::d(0));
    b.control(LOp::Do);
    b.alu2(Opcode::Add, x, r, Opnd::d(1));
    b.alu2(Opcode::Add, t, x, Opnd::d(1));
    b.control(LOp::Break).pred = Some(P);
    b.control(LOp::While);
    b.mov(r, t);
    b.alu2(Opcode::Add, x, r, Opnd::d(1));
    assert!(!coalesce_copies(&mut p));
    // A `WE_all` write reaches channels the copy does not; a copy of part of the value.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, r, t) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
    b.alu2(Opcode::Add, t, x, Opnd::d(1)).we_all = true;
    b.mov(r, t);
    let (v2, r2) = (b.vreg(Type::D, 2), b.vreg(Type::D, 2));
    b.alu2(Opcode::Add, v2, x, Opnd::d(1));
    b.alu2(Opcode::Add, v2.offset(32), x, Opnd::d(2));
    b.mov(r2, v2);
    b.alu2(Opcode::Add, x, r2.offset(32), r);
    assert!(!coalesce_copies(&mut p));
}

#[test]
fn values_copied_into_parts_of_a_payload_are_computed_there() {
    // An image store's coordinates and texel: one register per component, each value
    // computed into a register of its own and copied into its part of the payload.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, y, t, pay) = (
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 3),
    );
    b.mov(x, Opnd::g(1, 0, Type::D, 0));
    b.alu2(Opcode::Add, y, x, Opnd::d(1));
    b.alu2(Opcode::Mul, t, y, Opnd::d(3));
    b.mov(pay, x);
    b.mov(pay.offset(32), y);
    b.mov(pay.offset(64), t);
    b.inst(
        LOp::UntypedWrite {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 32,
        },
        Opnd::null(Type::UD),
        vec![pay, pay.offset(32)],
    );
    assert!(coalesce_copies(&mut p));
    assert_eq!(
        body(&p)[..3],
        [
            "mov(8@0) v3+0<1>:D, g1+0<0>:D",
            "add(8@0) v3+32<1>:D, v3+0<1>:D, 0x1:D",
            "mul(8@0) v3+64<1>:D, v3+32<1>:D, 0x3:D",
        ]
    );
    assert_eq!(body(&p).len(), 4);
}

#[test]
fn a_part_copy_stays_where_that_part_is_live_or_the_value_is_a_message_register() {
    // The payload's part is read between the value's write and the copy.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, pay, u) = (b.vreg(Type::D, 1), b.vreg(Type::D, 2), b.vreg(Type::D, 1));
    b.mov(pay.offset(32), Opnd::d(5));
    b.alu2(Opcode::Add, x, u, Opnd::d(1));
    b.alu2(Opcode::Add, u, pay.offset(32), Opnd::d(1));
    b.mov(pay.offset(32), x);
    b.alu2(Opcode::Add, u, pay, pay.offset(32));
    assert!(!coalesce_copies(&mut p));
    // Another part of the payload may be read meanwhile.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (x, pay, u) = (b.vreg(Type::D, 1), b.vreg(Type::D, 2), b.vreg(Type::D, 1));
    b.mov(pay, Opnd::d(5));
    b.alu2(Opcode::Add, x, u, Opnd::d(1));
    b.alu2(Opcode::Add, u, pay, Opnd::d(1));
    b.mov(pay.offset(32), x);
    b.alu2(Opcode::Add, u, pay, pay.offset(32));
    assert!(coalesce_copies(&mut p));
    // A value a message writes stays in its own register (messages take registers whole).
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 8);
    let (a, x, pay, u) = (
        b.vreg(Type::UD, 1),
        b.vreg(Type::D, 1),
        b.vreg(Type::D, 2),
        b.vreg(Type::D, 1),
    );
    b.inst(
        LOp::UntypedRead {
            surf: crate::backend::lir::Surface::Bti(0),
            comps: 1,
            comp_stride: 32,
        },
        x,
        vec![a],
    );
    b.mov(pay.offset(32), x);
    b.mov(pay, u);
    b.alu2(Opcode::Add, u, pay, pay.offset(32));
    assert!(!coalesce_copies(&mut p));
    // A copy to a part that does not start at a register boundary.
    let mut p = Program::default();
    let mut b = Builder::new(&mut p, 4);
    let (x, pay, u) = (b.vreg(Type::D, 1), b.vreg(Type::D, 2), b.vreg(Type::D, 1));
    b.alu2(Opcode::Add, x, u, Opnd::d(1));
    b.mov(pay.offset(16), x);
    b.mov(pay, u);
    b.alu2(Opcode::Add, u, pay, pay.offset(16));
    assert!(!coalesce_copies(&mut p));
}
