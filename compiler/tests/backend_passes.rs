//! Unit tests of the back-end passes: SIMD-width lowering, send lowering, legalization,
//! register allocation, scheduling and branch emission.

use ferrite_compiler::backend::lir::*;
use ferrite_compiler::backend::{emit, lower, ra, sched};
use ferrite_isa::{CondMod, MathFunction, Opcode, Sfid, Type};

fn inst(op: LOp, exec: u8, dst: Opnd, srcs: Vec<Opnd>) -> LInst {
    LInst {
        op,
        exec,
        group: 0,
        we_all: false,
        pred: None,
        cmod: CondMod::None,
        flag_sub: 0,
        sat: false,
        dst,
        srcs,
    }
}

#[test]
fn width_lowering_keeps_stride_and_offset() {
    let mut p = Program::default();
    let d = p.new_vreg(32 * 8);
    let s = p.new_vreg(32 * 4);
    // A SIMD32 F move writing with stride 2 at byte offset 4 (as a DF->F conversion would).
    let mut dst = Opnd::v(d, Type::F).offset(4);
    dst.stride = 2;
    p.insts.push(inst(
        LOp::Alu(Opcode::Mov),
        32,
        dst,
        vec![Opnd::v(s, Type::F)],
    ));
    // A stride-2 32-bit operand spans 8 bytes per channel: at most 8 channels per piece.
    lower::lower_simd_width(&mut p);
    assert_eq!(p.insts.len(), 4, "{p}");
    for (k, i) in p.insts.iter().enumerate() {
        let k = k as u32;
        assert_eq!(i.exec, 8);
        assert_eq!(i.group as u32, 8 * k);
        assert_eq!(i.dst.stride, 2, "stride kept");
        assert_eq!(
            i.dst.off,
            4 + k * 8 * 8,
            "sub-register offset kept and advanced"
        );
        assert_eq!(i.srcs[0].stride, 1);
        assert_eq!(i.srcs[0].off, k * 32);
    }
}

#[test]
fn width_lowering_table_limits() {
    let mut p = Program::default();
    let a = p.new_vreg(64);
    let b = p.new_vreg(64);
    let mut scalar = Opnd::v(b, Type::UD);
    scalar.stride = 0;
    p.insts.push(inst(
        LOp::Math(MathFunction::IntDiv),
        16,
        Opnd::v(a, Type::UD),
        vec![Opnd::v(a, Type::UD), scalar],
    ));
    p.insts.push(inst(
        LOp::Alu(Opcode::Add),
        16,
        Opnd::v(a, Type::D),
        vec![Opnd::v(a, Type::D), Opnd::d(1)],
    ));
    lower::lower_simd_width(&mut p);
    // Integer division: SIMD8 pieces; a SIMD16 add stays whole.
    assert_eq!(p.insts.len(), 3, "{p}");
    assert_eq!(
        p.insts[1].srcs[1], scalar,
        "scalar operand shared by both halves"
    );
    assert_eq!(p.insts[1].dst.off, 32);
    assert_eq!(p.insts[1].group, 8);
    assert_eq!(p.insts[2].exec, 16);
}

#[test]
fn untyped_read_lowering_descriptor_and_copies() {
    let mut p = Program::default();
    let addr = p.new_vreg(64);
    let d = p.new_vreg(32 * 8);
    // Two components, 128 bytes apart (a SIMD32 value's half): not contiguous at SIMD16.
    p.insts.push(inst(
        LOp::UntypedRead {
            surf: Surface::Bti(1),
            comps: 2,
            comp_stride: 128,
        },
        16,
        Opnd::v(d, Type::UD),
        vec![Opnd::v(addr, Type::UD)],
    ));
    lower::lower_sends(&mut p);
    let LOp::Send {
        sfid,
        desc,
        mlen,
        rlen,
        ..
    } = p.insts[0].op
    else {
        panic!("{p}")
    };
    assert_eq!(sfid, Sfid::DpDc1);
    assert_eq!((mlen, rlen), (2, 4));
    // docs/gen9.md 4.3: 0x04205e01 = SIMD16 read of X from BTI 1; XY enables Y too.
    assert_eq!(desc, 0x0440_5c01);
    assert_eq!(p.insts.len(), 3, "response copied out per component: {p}");
    assert_eq!(p.insts[2].dst.off, 128);
}

#[test]
fn single_channel_read_matches_observed_descriptor() {
    let mut p = Program::default();
    let addr = p.new_vreg(64);
    let d = p.new_vreg(64);
    p.insts.push(inst(
        LOp::UntypedRead {
            surf: Surface::Bti(1),
            comps: 1,
            comp_stride: 64,
        },
        16,
        Opnd::v(d, Type::UD),
        vec![Opnd::v(addr, Type::UD)],
    ));
    lower::lower_sends(&mut p);
    assert_eq!(p.insts.len(), 1, "contiguous destination: no copies");
    assert!(
        matches!(
            p.insts[0].op,
            LOp::Send {
                desc: 0x0420_5e01,
                ..
            }
        ),
        "{p}"
    );
}

#[test]
fn legalization_moves_immediates_out_of_src0() {
    let mut p = Program::default();
    let a = p.new_vreg(32);
    let r = Opnd::v(a, Type::D);
    // add(imm, reg): commutative -> swapped.
    p.insts
        .push(inst(LOp::Alu(Opcode::Add), 8, r, vec![Opnd::d(3), r]));
    // cmp.l(imm, reg) -> cmp.g(reg, imm).
    let mut c = inst(LOp::Alu(Opcode::Cmp), 8, r, vec![Opnd::d(3), r]);
    c.cmod = CondMod::L;
    p.insts.push(c);
    // shl(imm, reg): not commutative -> the immediate goes through a register.
    p.insts
        .push(inst(LOp::Alu(Opcode::Shl), 8, r, vec![Opnd::d(1), r]));
    // math never takes immediates.
    p.insts.push(inst(
        LOp::Math(MathFunction::Pow),
        8,
        r.retype(Type::F),
        vec![
            r.retype(Type::F),
            Opnd::imm(Type::F, 2.0f32.to_bits() as u64),
        ],
    ));
    lower::legalize(&mut p);
    assert_eq!(p.insts[0].srcs, vec![r, Opnd::d(3)]);
    assert_eq!(p.insts[1].cmod, CondMod::G);
    assert_eq!(p.insts[1].srcs, vec![r, Opnd::d(3)]);
    assert_eq!(p.insts[2].op, LOp::Alu(Opcode::Mov));
    assert_eq!(p.insts[2].srcs[0], Opnd::d(1));
    assert_eq!(p.insts[3].op, LOp::Alu(Opcode::Shl));
    assert!(!p.insts[3].srcs[0].is_imm());
    assert_eq!(p.insts[4].op, LOp::Alu(Opcode::Mov));
    assert!(p.insts[5].srcs.iter().all(|s| !s.is_imm()), "{p}");
}

/// A deterministic pseudo-random sequence.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn colouring_never_overlaps_live_registers() {
    let mut rng = Lcg(7);
    for round in 0..20 {
        let n = 60;
        let iv: Vec<Option<(usize, usize)>> = (0..n)
            .map(|_| {
                let s = rng.next(100) as usize;
                Some((s, s + rng.next(12) as usize))
            })
            .collect();
        let sizes: Vec<u32> = (0..n).map(|_| 1 + rng.next(4) as u32).collect();
        let cost = vec![1.0; n];
        let no_spill = vec![false; n];
        let file = ra::RegFile { first: 3, end: 127 };
        let reg = ra::colour(&iv, &sizes, &cost, &no_spill, file).expect("fits");
        for a in 0..n {
            assert!(reg[a] >= 3 && reg[a] as u32 + sizes[a] <= 127);
            for b in 0..a {
                let (sa, ea) = iv[a].unwrap();
                let (sb, eb) = iv[b].unwrap();
                if sa <= eb && sb <= ea {
                    let (ra_, rb) = (reg[a] as u32, reg[b] as u32);
                    assert!(
                        ra_ + sizes[a] <= rb || rb + sizes[b] <= ra_,
                        "round {round}: v{a} and v{b} overlap"
                    );
                }
            }
        }
    }
    // Four 4-GRF values live together do not fit in 12 GRFs.
    let iv = vec![Some((0, 10)); 4];
    let r = ra::colour(
        &iv,
        &[4; 4],
        &[1.0; 4],
        &[false; 4],
        ra::RegFile { first: 10, end: 22 },
    );
    assert_eq!(r.unwrap_err().len(), 1);
}

#[test]
fn loop_liveness_extends_to_while() {
    let mut p = Program::default();
    let a = p.new_vreg(32);
    let b = p.new_vreg(32);
    let ra_ = Opnd::v(a, Type::D);
    let rb = Opnd::v(b, Type::D);
    p.insts
        .push(inst(LOp::Alu(Opcode::Mov), 8, ra_, vec![Opnd::d(0)])); // 0
    p.insts.push(inst(LOp::Do, 8, Opnd::null(Type::D), vec![])); // 1
    p.insts
        .push(inst(LOp::Alu(Opcode::Add), 8, rb, vec![ra_, Opnd::d(1)])); // 2: last use of a
    p.insts.push(inst(LOp::Alu(Opcode::Mov), 8, rb, vec![rb])); // 3
    p.insts
        .push(inst(LOp::While, 8, Opnd::null(Type::D), vec![])); // 4
    let iv = ra::intervals(&p);
    assert_eq!(
        iv[a as usize],
        Some((0, 4)),
        "a is read again on the next iteration"
    );
    assert_eq!(iv[b as usize], Some((2, 3)), "b lives inside one iteration");
}

#[test]
fn allocation_spills_under_pressure() {
    // 40 values of 4 GRFs all live at once: more than the file holds.
    let mut p = Program::default();
    let vals: Vec<u32> = (0..40).map(|_| p.new_vreg(128)).collect();
    for &v in &vals {
        p.insts.push(inst(
            LOp::Alu(Opcode::Mov),
            32,
            Opnd::v(v, Type::D),
            vec![Opnd::d(v as i32)],
        ));
    }
    let acc = p.new_vreg(128);
    for &v in &vals {
        p.insts.push(inst(
            LOp::Alu(Opcode::Add),
            32,
            Opnd::v(acc, Type::D),
            vec![Opnd::v(acc, Type::D), Opnd::v(v, Type::D)],
        ));
    }
    lower::lower_simd_width(&mut p);
    let file = ra::RegFile { first: 3, end: 127 };
    let alloc = ra::allocate(&mut p, file, 0).unwrap();
    assert!(alloc.spills > 0 && alloc.fills > 0);
    assert!(alloc.scratch_bytes >= 128);
    assert!(alloc.grf_used <= 127);
    // No scratch message may remain logical, and live registers never share a GRF.
    assert!(p.insts.iter().all(|i| !i.op.is_logical()));
    let iv = ra::intervals(&p);
    let sizes: Vec<u32> = p.vregs.iter().map(|v| v.regs()).collect();
    for a in 0..iv.len() {
        for b in 0..a {
            if let (Some((sa, ea)), Some((sb, eb))) = (iv[a], iv[b]) {
                if sa <= eb && sb <= ea {
                    let (x, y) = (alloc.reg[a] as u32, alloc.reg[b] as u32);
                    assert!(x + sizes[a] <= y || y + sizes[b] <= x, "v{a} v{b}");
                }
            }
        }
    }
}

#[test]
fn scheduling_hides_send_latency_and_keeps_dependencies() {
    let mut p = Program::default();
    let addr = p.new_vreg(32);
    let data = p.new_vreg(32);
    let x = p.new_vreg(32);
    let y = p.new_vreg(32);
    let read = LOp::Send {
        indirect: false,
        sfid: Sfid::DpDc1,
        desc: 0x0210_6e01,
        ex_desc: 0,
        mlen: 1,
        ex_mlen: 0,
        rlen: 1,
        eot: false,
    };
    p.insts.push(inst(
        LOp::Alu(Opcode::Mov),
        8,
        Opnd::v(x, Type::D),
        vec![Opnd::d(1)],
    )); // 0
    p.insts.push(inst(
        read,
        8,
        Opnd::v(data, Type::UD),
        vec![Opnd::v(addr, Type::UD)],
    )); // 1
    p.insts.push(inst(
        LOp::Alu(Opcode::Add),
        8,
        Opnd::v(data, Type::D),
        vec![Opnd::v(data, Type::D), Opnd::d(1)],
    )); // 2 depends on 1
    p.insts.push(inst(
        LOp::Alu(Opcode::Mul),
        8,
        Opnd::v(y, Type::D),
        vec![Opnd::v(x, Type::D), Opnd::d(3)],
    )); // 3 depends on 0 only
    let reg: Vec<u8> = vec![10, 11, 12, 13];
    let before = p.insts.clone();
    let cycles = sched::schedule(&mut p, &reg);
    let pos = |op: &LInst| p.insts.iter().position(|i| i == op).unwrap();
    assert!(pos(&before[1]) < pos(&before[2]), "RAW kept");
    assert!(pos(&before[0]) < pos(&before[3]), "RAW kept");
    assert!(
        pos(&before[3]) < pos(&before[2]),
        "independent ALU fills the send latency"
    );
    assert!((200..260).contains(&cycles), "{cycles}");
}

#[test]
fn branch_offsets() {
    let mut p = Program::default();
    let a = p.new_vreg(32);
    let r = Opnd::v(a, Type::D);
    let mov = || inst(LOp::Alu(Opcode::Mov), 8, r, vec![Opnd::d(1)]);
    let ctl = |op| inst(op, 8, Opnd::null(Type::D), vec![]);
    let mut iff = ctl(LOp::If);
    iff.pred = Some(Pred {
        flag_sub: 0,
        inverse: false,
    });
    p.insts = vec![
        iff,             // 0
        mov(),           // 1
        ctl(LOp::Else),  // 2
        mov(),           // 3
        ctl(LOp::Endif), // 4
        ctl(LOp::Do),    // (marker)
        mov(),           // 5
        ctl(LOp::If),    // 6
        ctl(LOp::Break), // 7
        ctl(LOp::Endif), // 8
        ctl(LOp::While), // 9
    ];
    let insts = emit::to_isa(&p, &[4], 8, 128).unwrap();
    assert_eq!(insts.len(), 10);
    let off = |k: usize| insts[k].branch_offsets().unwrap();
    assert_eq!(
        off(0),
        (3 * 16, Some(4 * 16)),
        "IF: JIP after ELSE, UIP ENDIF"
    );
    assert_eq!(off(2), (2 * 16, Some(2 * 16)), "ELSE: to ENDIF");
    assert_eq!(off(4).0, 16, "top-level ENDIF: next");
    assert_eq!(off(7), (16, Some(2 * 16)), "BREAK: JIP ENDIF, UIP WHILE");
    assert_eq!(off(8).0, 16, "ENDIF inside the loop: the WHILE");
    assert_eq!(off(9).0, -4 * 16, "WHILE: back to the loop start");
    let v = ferrite_isa::validate::validate_program(&insts, ferrite_isa::validate::Platform::Skl);
    assert!(v.is_empty(), "{}", ferrite_isa::validate::report(&v));
}

/// A shuffle `c + k` (`Lanes::Add`) reads its value at `a0` = the lanes' byte offsets plus
/// the address of element k, one instruction, wherever every channel's address (those past
/// the subgroup's end included) stays inside the GRF file; near either end of the file the
/// offsets are first reduced modulo the value's bytes (add, and, add), so that no address
/// leaves it. `c ^ k` is the xor and the add. The add of the value's address goes into the
/// gather's immediate where that is GRF-aligned and below 512 (g0..g15).
#[test]
fn relative_shuffle_addresses_stay_inside_the_grf_file() {
    // Value (16 dwords, 2 GRFs), lane byte offsets or indices, destination.
    let a0_steps = |value_grf: u8, lanes: Lanes| {
        let mut p = Program::default();
        let x = p.new_vreg(64);
        // Byte offsets (UW), or an index per channel (UD).
        let offs = p.new_vreg(64);
        let ty = if lanes == Lanes::Index {
            Type::UD
        } else {
            Type::UW
        };
        let d = p.new_vreg(64);
        p.insts = vec![inst(
            LOp::Shuffle { width: 16, lanes },
            16,
            Opnd::v(d, Type::UD),
            vec![Opnd::v(x, Type::UD), Opnd::v(offs, ty)],
        )];
        let insts = emit::to_isa(&p, &[value_grf, 40, 50], 16, 128).unwrap();
        emit::validate(&insts).unwrap();
        insts.len() - 1
    };
    assert_eq!(a0_steps(20, Lanes::Add(3)), 1);
    assert_eq!(a0_steps(20, Lanes::Add(-5)), 1);
    // g126-g127: channels 13..15 would read past g127.
    assert_eq!(a0_steps(126, Lanes::Add(3)), 3);
    // g0: channel 0 would read 4 bytes before g0 (the address is then the immediate).
    assert_eq!(a0_steps(0, Lanes::Add(-1)), 2);
    assert_eq!(a0_steps(1, Lanes::Add(-1)), 1);
    assert_eq!(a0_steps(126, Lanes::Xor(5)), 2);
    assert_eq!(a0_steps(4, Lanes::Xor(5)), 1);
    assert_eq!(a0_steps(4, Lanes::Index), 2);
    assert_eq!(a0_steps(20, Lanes::Index), 3);
}
