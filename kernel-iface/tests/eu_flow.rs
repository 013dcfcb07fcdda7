//! EU behaviour beyond single ALU ops: SIMD control flow with per-channel masks,
//! predication modes, channel groups, register-indirect regions, Align16 3-source
//! swizzles, SEND payload/response handling, barriers, hangs and the instruction budget.

#![allow(clippy::needless_range_loop)]

mod eu_common;

use eu_common::*;
use ferrite_isa::{
    Addr, Dst, Dst3, ExDesc, ExecSize, Gen, Instruction, Opcode, Operands, RegFile, RegSrc, Region,
    SendDesc, SendsReg, Sfid, Src, Src3, Swizzle, Type, WriteMask,
};
use kernel_iface::gpu::eu::{Kernel, ThreadState, ThreadStatus};

/// Assembles Mesa-syntax `text` with the ISA crate and appends the EOT send.
fn asm(text: &str) -> Kernel {
    let mut bytes = ferrite_isa::assemble(text, Gen::Gen9)
        .unwrap_or_else(|e| panic!("assembly failed: {e}\n{text}"));
    let eot = ferrite_isa::encode(&eot(), Gen::Gen9).expect("encode eot");
    bytes.extend_from_slice(&eot);
    Kernel::decode(&bytes, Gen::Gen9).expect("decode")
}

fn dwords(t: &ThreadState, reg: usize, n: usize) -> Vec<i32> {
    (0..n)
        .map(|k| get(t, reg * 32 + 4 * k, 4) as u32 as i32)
        .collect()
}

fn set_dwords(t: &mut ThreadState, reg: usize, v: &[i32]) {
    for (k, x) in v.iter().enumerate() {
        put(t, reg * 32 + 4 * k, 4, *x as u32 as u64);
    }
}

#[test]
fn if_else_endif_splits_channels() {
    let k = asm(r"
        cmp.l.f0.0(16)  null<1>D        g10<8,8,1>D     0D              { align1 1H };
        (+f0.0) if(16)  JIP: LELSE      UIP: LEND                       { align1 1H };
        mov(16)         g20<1>D         1D                              { align1 1H };
        else(16)        JIP: LEND       UIP: LEND                       { align1 1H };
    LELSE:
        mov(16)         g20<1>D         2D                              { align1 1H };
    LEND:
        endif(16)       JIP: LEXIT                                      { align1 1H };
    LEXIT:
        add(16)         g22<1>D         g20<8,8,1>D     10D             { align1 1H };
    ");
    let input: Vec<i32> = (0..16)
        .map(|i| if i % 3 == 0 { -i - 1 } else { i })
        .collect();
    for mask in [0xFFFFu32, 0x00F0, 0x8001] {
        let mut t = ThreadState::new(16, mask);
        set_dwords(&mut t, 10, &input);
        set_dwords(&mut t, 20, &[-7; 16]);
        run_to_eot(&mut t, &k, &mut TestPort::default());
        let g20 = dwords(&t, 20, 16);
        let g21 = dwords(&t, 22, 16);
        for lane in 0..16 {
            if mask >> lane & 1 == 0 {
                assert_eq!(g20[lane], -7, "mask {mask:#x} lane {lane}");
                continue;
            }
            let e = if input[lane] < 0 { 1 } else { 2 };
            assert_eq!(
                g20[lane], e,
                "mask {mask:#x} lane {lane} input {}",
                input[lane]
            );
            assert_eq!(g21[lane], e + 10, "mask {mask:#x} lane {lane}");
        }
    }
}

#[test]
fn if_with_no_channel_taken_jumps_over_we_all_code() {
    // A WE_all instruction inside a block no channel enters must not execute.
    let k = asm(r"
        cmp.l.f0.0(8)   null<1>D        g10<8,8,1>D     0D              { align1 1Q };
        (+f0.0) if(8)   JIP: LEND       UIP: LEND                       { align1 1Q };
        mov(8)          g20<1>D         5D                              { align1 WE_all 1Q };
    LEND:
        endif(8)        JIP: LEXIT                                      { align1 1Q };
    LEXIT:
        nop                                                             ;
    ");
    let mut t = ThreadState::new(8, 0xFF);
    set_dwords(&mut t, 10, &[1; 8]);
    run_to_eot(&mut t, &k, &mut TestPort::default());
    assert_eq!(dwords(&t, 20, 8), vec![0; 8]);
}

#[test]
fn loop_with_break_and_cont_runs_per_channel_trip_counts() {
    let k = asm(r"
        mov(16)         g20<1>D         0D                              { align1 1H };
        mov(16)         g22<1>D         0D                              { align1 1H };
    LLOOP:
        cmp.ge.f0.0(16) null<1>D        g20<8,8,1>D     g10<8,8,1>D     { align1 1H };
        (+f0.0) break(16) JIP: LW       UIP: LW                         { align1 1H };
        add(16)         g20<1>D         g20<8,8,1>D     1D              { align1 1H };
        and.z.f0.0(16)  null<1>UD       g20<8,8,1>UD    0x00000001UD    { align1 1H };
        (+f0.0) cont(16) JIP: LW        UIP: LW                         { align1 1H };
        add(16)         g22<1>D         g22<8,8,1>D     g20<8,8,1>D     { align1 1H };
    LW:
        while(16)       JIP: LLOOP                                      { align1 1H };
        add(16)         g24<1>D         g20<8,8,1>D     100D            { align1 1H };
    ");
    let n: Vec<i32> = (0..16).map(|i| (i * 7) % 11).collect();
    let mut t = ThreadState::new(16, 0xFFFF);
    set_dwords(&mut t, 10, &n);
    run_to_eot(&mut t, &k, &mut TestPort::default());
    let (g20, g21, g22) = (dwords(&t, 20, 16), dwords(&t, 22, 16), dwords(&t, 24, 16));
    for lane in 0..16 {
        let odd_sum: i32 = (1..=n[lane]).filter(|i| i % 2 == 1).sum();
        assert_eq!(g20[lane], n[lane], "lane {lane}");
        assert_eq!(g21[lane], odd_sum, "lane {lane} n {}", n[lane]);
        assert_eq!(g22[lane], n[lane] + 100, "lane {lane}");
    }
}

#[test]
fn predicated_while_loops_until_every_channel_fails() {
    let k = asm(r"
        mov(8)          g20<1>D         0D                              { align1 1Q };
    LLOOP:
        add(8)          g20<1>D         g20<8,8,1>D     3D              { align1 1Q };
        cmp.l.f0.0(8)   null<1>D        g20<8,8,1>D     g10<8,8,1>D     { align1 1Q };
        (+f0.0) while(8) JIP: LLOOP                                     { align1 1Q };
    ");
    let n = [0, 1, 3, 4, 10, 30, 2, 7];
    let mut t = ThreadState::new(8, 0xFF);
    set_dwords(&mut t, 10, &n);
    run_to_eot(&mut t, &k, &mut TestPort::default());
    let g20 = dwords(&t, 20, 8);
    for lane in 0..8 {
        let mut x = 0;
        loop {
            x += 3;
            if x >= n[lane] {
                break;
            }
        }
        assert_eq!(g20[lane], x, "lane {lane}");
    }
}

#[test]
fn halt_parks_channels_until_the_end() {
    let k = asm(r"
        cmp.l.f0.0(16)  null<1>D        g10<8,8,1>D     0D              { align1 1H };
        (+f0.0) halt(16) JIP: LEND      UIP: LEND                       { align1 1H };
        mov(16)         g20<1>D         7D                              { align1 1H };
    LEND:
        nop                                                             ;
    ");
    let input: Vec<i32> = (0..16).map(|i| if i % 4 == 1 { -1 } else { 1 }).collect();
    let mut t = ThreadState::new(16, 0xFFFF);
    set_dwords(&mut t, 10, &input);
    run_to_eot(&mut t, &k, &mut TestPort::default());
    let g20 = dwords(&t, 20, 16);
    for lane in 0..16 {
        assert_eq!(
            g20[lane],
            if input[lane] < 0 { 0 } else { 7 },
            "lane {lane}"
        );
    }
}

#[test]
fn runaway_loop_hangs_within_budget_and_next_thread_runs() {
    let k = asm(r"
    LLOOP:
        add(8)          g20<1>D         g20<8,8,1>D     1D              { align1 1Q };
        while(8)        JIP: LLOOP                                      { align1 1Q };
    ");
    let mut t = ThreadState::new(8, 0xFF);
    let mut budget = 10_000;
    match t.run(&k, &mut TestPort::default(), &mut budget) {
        ThreadStatus::Hang(why) => assert!(why.contains("budget"), "{why}"),
        other => panic!("expected a hang, got {other:?}"),
    }
    assert_eq!(budget, 0);
    assert_eq!(dwords(&t, 20, 1)[0], 5000);
    let ok = asm("mov(8) g20<1>D 1D { align1 1Q };");
    let mut t2 = ThreadState::new(8, 0xFF);
    run_to_eot(&mut t2, &ok, &mut TestPort::default());
    assert_eq!(dwords(&t2, 20, 8), vec![1; 8]);
}

#[test]
fn predicate_any_all_and_channel_groups() {
    let k = asm(r"
        (+f0.0.any4h) mov(16) g20<1>D   1D                              { align1 1H };
        (+f0.0.all4h) mov(16) g22<1>D   1D                              { align1 1H };
        (-f0.0) mov(8)  g24<1>D         1D                              { align1 2Q };
        (+f1.0) mov(8)  g25<1>D         1D                              { align1 1Q };
    ");
    let flags: u64 = 0b1111_0000_0100_0000 | (0x55 << 32);
    let mut t = ThreadState::new(16, 0xFFFF);
    t.set_flags(flags);
    run_to_eot(&mut t, &k, &mut TestPort::default());
    let bit = |b: usize| (flags >> b) & 1 == 1;
    let g20 = dwords(&t, 20, 16);
    let g21 = dwords(&t, 22, 16);
    for lane in 0..16 {
        let g = lane & !3;
        let any = (g..g + 4).any(bit);
        let all = (g..g + 4).all(bit);
        assert_eq!(g20[lane], any as i32, "any4h lane {lane}");
        assert_eq!(g21[lane], all as i32, "all4h lane {lane}");
    }
    // 2Q: lanes 0..7 of the instruction are channels 8..15 and use flag bits 8..15.
    let g22 = dwords(&t, 24, 8);
    for lane in 0..8 {
        assert_eq!(g22[lane], !bit(8 + lane) as i32, "2Q lane {lane}");
    }
    let g23 = dwords(&t, 25, 8);
    for lane in 0..8 {
        assert_eq!(g23[lane], bit(32 + lane) as i32, "f1.0 lane {lane}");
    }
}

#[test]
fn register_indirect_regions_read_through_a0() {
    // mov(1) a0.0 = byte address of g12.2; then mov(8) g20 = g[a0.0 + 4]<8,8,1>UD.
    // VxH: each lane reads the dword a0.lane points at.
    let mut insts = vec![Instruction::alu1(
        Opcode::Mov,
        ExecSize::S1,
        Dst::new(Addr::arf(ferrite_isa::ArfReg::A0, 0), Type::UW),
        Src::Imm(ferrite_isa::Imm::uw(12 * 32 + 8)),
    )];
    insts[0].we_all = true;
    let ind = |imm: i16, region: Region| {
        Src::Reg(RegSrc::new(
            Addr::Indirect {
                file: RegFile::Grf,
                addr_subnr: 0,
                imm,
            },
            Type::UD,
            region,
        ))
    };
    insts.push(Instruction::alu1(
        Opcode::Mov,
        ExecSize::S8,
        Dst::grf(20, Type::UD),
        ind(4, Region::new(8, 8, 1)),
    ));
    let k = Kernel::from_instructions(&[insts[0], insts[1], eot()]).expect("kernel");
    let mut t = ThreadState::new(8, 0xFF);
    for d in 0..24 {
        put(&mut t, 12 * 32 + 4 * d, 4, 1000 + d as u64);
    }
    run_to_eot(&mut t, &k, &mut TestPort::default());
    assert_eq!(t.a0(0), 12 * 32 + 8);
    assert_eq!(
        dwords(&t, 20, 8),
        (3..11).map(|d| 1000 + d).collect::<Vec<_>>()
    );

    // VxH with width 1: lane k uses a0.k.
    let vxh = Instruction::alu1(
        Opcode::Mov,
        ExecSize::S8,
        Dst::grf(21, Type::UD),
        ind(0, Region::new(Region::VXH, 1, 0)),
    );
    let k = Kernel::from_instructions(&[vxh, eot()]).expect("kernel");
    let mut t = ThreadState::new(8, 0xFF);
    for d in 0..24 {
        put(&mut t, 12 * 32 + 4 * d, 4, 1000 + d as u64);
    }
    // a0 cannot be preset from outside except through instructions: write it with mov(8).
    let set_a0 = Instruction::alu1(
        Opcode::Mov,
        ExecSize::S8,
        Dst::new(Addr::arf(ferrite_isa::ArfReg::A0, 0), Type::UW),
        Src::Reg(RegSrc::grf(30, 0, Type::UW, Region::new(8, 8, 1))),
    );
    let k2 = Kernel::from_instructions(&[set_a0, vxh, eot()]).expect("kernel");
    let order = [5u16, 0, 7, 1, 23, 2, 9, 4];
    for (lane, d) in order.iter().enumerate() {
        put(&mut t, 30 * 32 + 2 * lane, 2, (12 * 32 + 4 * d) as u64);
    }
    drop(k);
    run_to_eot(&mut t, &k2, &mut TestPort::default());
    let want: Vec<i32> = order.iter().map(|d| 1000 + *d as i32).collect();
    assert_eq!(dwords(&t, 21, 8), want);
}

/// The subgroup shuffle's gather (as the compiler emits it): `a0.k = ((idx[k] & (W-1)) << log2
/// size) + base` with `WE_all`, then one `mov` with a VxH region in which channel k reads the
/// element at `a0.k`, under the execution mask. SIMD16 dwords use a0.0..a0.15; 8 qwords
/// a0.0..a0.7. Indices past the width wrap; disabled channels keep their old value.
#[test]
fn vxh_gather_reads_one_a0_word_per_channel() {
    let a0 = || Dst::new(Addr::arf(ferrite_isa::ArfReg::A0, 0), Type::UW);
    let a0_src = || {
        Src::Reg(RegSrc::new(
            Addr::arf(ferrite_isa::ArfReg::A0, 0),
            Type::UW,
            Region::new(8, 8, 1),
        ))
    };
    let uw = |v: u16| Src::Imm(ferrite_isa::Imm::uw(v));
    for (exec, ty, size, width) in [
        (ExecSize::S16, Type::UD, 4usize, 16u16),
        (ExecSize::S8, Type::UQ, 8, 8),
    ] {
        let n = if ty == Type::UD { 16 } else { 8 };
        let mut insts = vec![
            Instruction::alu2(
                Opcode::And,
                exec,
                a0(),
                Src::Reg(RegSrc::grf(10, 0, Type::UW, Region::new(16, 8, 2))),
                uw(width - 1),
            ),
            Instruction::alu2(
                Opcode::Shl,
                exec,
                a0(),
                a0_src(),
                uw(size.trailing_zeros() as u16),
            ),
            Instruction::alu2(Opcode::Add, exec, a0(), a0_src(), uw(12 * 32)),
        ];
        for i in &mut insts {
            i.we_all = true;
        }
        insts.push(Instruction::alu1(
            Opcode::Mov,
            exec,
            Dst::grf(20, ty),
            Src::Reg(RegSrc::indirect(ty, Region::new(Region::VXH, 1, 0))),
        ));
        insts.push(eot());
        let k = Kernel::from_instructions(&insts).expect("kernel");
        let mask = if n == 16 { 0xF0FF } else { 0xF7 };
        let mut t = ThreadState::new(n as u32, mask);
        let idx: Vec<i32> = (0..n as i32).map(|k| (k * 7 + 3) % 64).collect();
        set_dwords(&mut t, 10, &idx);
        for e in 0..n {
            put(&mut t, 12 * 32 + size * e, size, 1000 + e as u64);
            put(&mut t, 20 * 32 + size * e, size, 7);
        }
        run_to_eot(&mut t, &k, &mut TestPort::default());
        for c in 0..n {
            let got = get(&t, 20 * 32 + size * c, size);
            let want = if mask >> c & 1 == 1 {
                1000 + (idx[c] as u64 & (u64::from(width) - 1))
            } else {
                7
            };
            assert_eq!(got, want, "{ty} channel {c}, index {}", idx[c]);
        }
    }
}

#[test]
fn align16_three_source_swizzle_replicate_and_writemask() {
    // mad(8) g20.xz = g10.yxwz + g11 * g12.1<0,1,0> (rep ctrl)
    let s = |nr, swz: [u8; 4], rep: bool, subnr: u8| Src3 {
        nr,
        subnr,
        swizzle: Swizzle(swz),
        rep_ctrl: rep,
        negate: false,
        abs: false,
        ty: Type::F,
    };
    let inst = Instruction::new(
        Opcode::Mad,
        ExecSize::S8,
        Operands::ThreeSrc {
            cond_mod: ferrite_isa::CondMod::None,
            dst: Dst3 {
                nr: 20,
                subnr_dw: 0,
                writemask: WriteMask(0b0101),
                ty: Type::F,
            },
            src: [
                s(10, [1, 0, 3, 2], false, 0),
                s(11, [0, 1, 2, 3], false, 0),
                s(12, [0; 4], true, 4),
            ],
        },
    );
    let k = kernel(&[inst, eot()], false);
    let mut t = ThreadState::new(8, 0xFF);
    for i in 0..8 {
        put(
            &mut t,
            10 * 32 + 4 * i,
            4,
            (i as f32 * 10.0).to_bits() as u64,
        );
        put(&mut t, 11 * 32 + 4 * i, 4, (i as f32).to_bits() as u64);
        put(
            &mut t,
            12 * 32 + 4 * i,
            4,
            (i as f32 + 0.5).to_bits() as u64,
        );
        put(&mut t, 20 * 32 + 4 * i, 4, (-1.0f32).to_bits() as u64);
    }
    run_to_eot(&mut t, &k, &mut TestPort::default());
    let swz = [1, 0, 3, 2];
    for lane in 0..8 {
        let got = f32::from_bits(get(&t, 20 * 32 + 4 * lane, 4) as u32);
        let want = if lane % 4 == 0 || lane % 4 == 2 {
            let a = ((lane / 4) * 4 + swz[lane % 4]) as f32 * 10.0;
            (lane as f32).mul_add(1.5, a)
        } else {
            -1.0
        };
        assert_eq!(got, want, "lane {lane}");
    }
}

#[test]
fn send_gathers_payload_and_scatters_enabled_response_lanes() {
    // SIMD16 untyped read shape: mlen 2, rlen 2, under a partial execution mask.
    let send = Instruction::new(
        Opcode::Send,
        ExecSize::S16,
        Operands::Send {
            sfid: Sfid::DpDc1,
            eot: false,
            dst: Dst::grf(30, Type::UD),
            src0: RegSrc::grf(40, 0, Type::UD, Region::SCALAR),
            desc: SendDesc::Imm(0x0420_5e01),
            ex_desc_31_28: 0,
        },
    );
    let sends = Instruction::new(
        Opcode::Sends,
        ExecSize::S8,
        Operands::SplitSend {
            sfid: Sfid::DpDc1,
            eot: false,
            dst: SendsReg::null(),
            src0: SendsReg::grf(40),
            src1: SendsReg::grf(50),
            desc: SendDesc::Imm(0x0202_6e01),
            ex_desc: ExDesc::Imm(0x40),
        },
    );
    let k = kernel(&[send, sends, eot()], false);
    let mut t = ThreadState::new(16, 0x0F0F);
    for b in 0..64 {
        t.grf_bytes_mut()[40 * 32 + b] = b as u8;
        t.grf_bytes_mut()[50 * 32 + b] = 0x80 | b as u8;
    }
    set_dwords(&mut t, 30, &[-1; 16]);
    let mut port = TestPort {
        fill: 500,
        ..Default::default()
    };
    run_to_eot(&mut t, &k, &mut port);
    assert_eq!(port.msgs.len(), 3);
    let m = &port.msgs[0];
    assert_eq!(
        (m.sfid, m.desc, m.exec_size, m.exec_mask),
        (12, 0x0420_5e01, 16, 0x0F0F)
    );
    assert_eq!(m.payload, t.grf_bytes()[40 * 32..42 * 32].to_vec());
    let g30 = dwords(&t, 30, 16);
    for lane in 0..16 {
        let want = if 0x0F0F >> lane & 1 != 0 {
            500 + lane as i32
        } else {
            -1
        };
        assert_eq!(g30[lane], want, "lane {lane}");
    }
    let s = &port.msgs[1];
    assert_eq!(s.exec_mask, 0x0F);
    assert_eq!(s.payload.len(), 64);
    assert_eq!(&s.payload[..32], &t.grf_bytes()[40 * 32..41 * 32]);
    assert_eq!(&s.payload[32..], &t.grf_bytes()[50 * 32..51 * 32]);
    assert_eq!(s.ex_desc & 0xF, 12);
    assert_eq!(port.msgs[2].sfid, 7);
}

#[test]
fn barrier_pauses_and_resumes_after_wait() {
    let mut barrier = Instruction::new(
        Opcode::Send,
        ExecSize::S8,
        Operands::Send {
            sfid: Sfid::Gateway,
            eot: false,
            dst: Dst::null(Type::UD),
            src0: RegSrc::grf(1, 0, Type::UD, Region::SCALAR),
            desc: SendDesc::Imm(0x0200_0004),
            ex_desc_31_28: 0,
        },
    );
    barrier.we_all = true;
    let wait = ferrite_isa::assemble("wait(1) n0<1>UD { align1 WE_all 1N };", Gen::Gen9)
        .map(|b| ferrite_isa::decode(&b, Gen::Gen9).expect("decode wait").0)
        .expect("assemble wait");
    let mov = Instruction::alu1(
        Opcode::Mov,
        ExecSize::S8,
        Dst::grf(20, Type::D),
        Src::Imm(ferrite_isa::Imm::d(9)),
    );
    let k = kernel(&[barrier, wait, mov, eot()], false);
    let mut t = ThreadState::new(8, 0xFF);
    let mut port = TestPort::default();
    let mut budget = 100;
    assert_eq!(t.run(&k, &mut port, &mut budget), ThreadStatus::Barrier);
    assert_eq!(dwords(&t, 20, 1)[0], 0);
    assert_eq!(t.run(&k, &mut port, &mut budget), ThreadStatus::Eot);
    assert_eq!(dwords(&t, 20, 8), vec![9; 8]);
    assert_eq!(budget, 96);
}

#[test]
fn illegal_instructions_and_faults_hang_with_a_reason() {
    // Opcode 0 (illegal).
    let ill = Instruction::alu1(
        Opcode::Illegal,
        ExecSize::S8,
        Dst::grf(2, Type::UD),
        Src::Reg(RegSrc::grf(3, 0, Type::UD, Region::new(8, 8, 1))),
    );
    let k = Kernel::from_instructions(&[ill, eot()]).expect("kernel");
    let mut t = ThreadState::new(8, 0xFF);
    match t.run(&k, &mut TestPort::default(), &mut 100) {
        ThreadStatus::Hang(why) => assert!(why.contains("illegal"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A message fault from the port.
    let mut bad = eot();
    if let Operands::Send { sfid, eot, .. } = &mut bad.operands {
        *sfid = Sfid::Cre;
        *eot = false;
    }
    let k = Kernel::from_instructions(&[bad, eot()]).expect("kernel");
    struct Faulty;
    impl kernel_iface::gpu::eu::MessagePort for Faulty {
        fn send(
            &mut self,
            _: kernel_iface::gpu::eu::Message<'_>,
        ) -> Result<kernel_iface::gpu::eu::SendOutcome, String> {
            Err("no such surface".into())
        }
    }
    match ThreadState::new(8, 0xFF).run(&k, &mut Faulty, &mut 100) {
        ThreadStatus::Hang(why) => assert!(why.contains("no such surface"), "{why}"),
        other => panic!("{other:?}"),
    }
    // Running off the end of the program.
    let k = Kernel::from_instructions(&[Instruction::new(
        Opcode::Nop,
        ExecSize::S1,
        Operands::Basic {
            cond_mod: ferrite_isa::CondMod::None,
            math_fn: None,
            dst: Dst::zero(),
            src0: Src::zero(),
            src1: Src::zero(),
        },
    )])
    .expect("kernel");
    assert!(matches!(
        ThreadState::new(8, 0xFF).run(&k, &mut TestPort::default(), &mut 100),
        ThreadStatus::Hang(_)
    ));
}

#[test]
fn trace_output_does_not_disturb_execution() {
    let k = asm("add(8) g20<1>D g10<8,8,1>D 1D { align1 1Q };");
    let mut t = ThreadState::new(8, 0xFF);
    t.set_trace(true);
    run_to_eot(&mut t, &k, &mut TestPort::default());
    assert_eq!(dwords(&t, 20, 8), vec![1; 8]);
    assert_eq!(t.instructions, 2);
    assert_eq!(t.lane_instructions, 16);
}

#[test]
fn nested_loops_with_if_and_partial_dispatch() {
    let k = asm(r"
        mov(16)         g20<1>D         0D                              { align1 1H };
        mov(16)         g22<1>D         0D                              { align1 1H };
    LOUTER:
        add(16)         g20<1>D         g20<8,8,1>D     1D              { align1 1H };
        mov(16)         g24<1>D         0D                              { align1 1H };
    LINNER:
        add(16)         g24<1>D         g24<8,8,1>D     1D              { align1 1H };
        cmp.ge.f0.0(16) null<1>D        g24<8,8,1>D     g20<8,8,1>D     { align1 1H };
        (+f0.0) break(16) JIP: LIW      UIP: LIW                        { align1 1H };
        add(16)         g22<1>D         g22<8,8,1>D     g24<8,8,1>D     { align1 1H };
    LIW:
        while(16)       JIP: LINNER                                     { align1 1H };
        and.nz.f0.0(16) null<1>UD       g20<8,8,1>UD    0x00000001UD    { align1 1H };
        (+f0.0) if(16)  JIP: LENDIF     UIP: LENDIF                     { align1 1H };
        add(16)         g22<1>D         g22<8,8,1>D     100D            { align1 1H };
    LENDIF:
        endif(16)       JIP: LCOND                                      { align1 1H };
    LCOND:
        cmp.l.f0.0(16)  null<1>D        g20<8,8,1>D     g10<8,8,1>D     { align1 1H };
        (+f0.0) while(16) JIP: LOUTER                                   { align1 1H };
    ");
    let n: Vec<i32> = (0..16).map(|i| (i * 5) % 9).collect();
    for mask in [0xFFFF, 0x5A5A, 0x0001] {
        let mut t = ThreadState::new(16, mask);
        set_dwords(&mut t, 10, &n);
        set_dwords(&mut t, 22, &[-3; 16]);
        run_to_eot(&mut t, &k, &mut TestPort::default());
        let g22 = dwords(&t, 22, 16);
        for lane in 0..16 {
            if mask >> lane & 1 == 0 {
                assert_eq!(g22[lane], -3, "mask {mask:#x} lane {lane}");
                continue;
            }
            let (mut i, mut acc) = (0, 0);
            loop {
                i += 1;
                acc += (1..i).sum::<i32>();
                if i % 2 == 1 {
                    acc += 100;
                }
                if i >= n[lane] {
                    break;
                }
            }
            assert_eq!(g22[lane], acc, "mask {mask:#x} lane {lane} n {}", n[lane]);
        }
    }
}

#[test]
fn kernel_writes_to_cr0_change_rounding_and_denormals() {
    // RTZ (cr0 bits 5:4 = 3) then fp32 denormal preserve (bit 7).
    let k = asm(r"
        add(8)          g20<1>F         g10<8,8,1>F     g11<8,8,1>F     { align1 1Q };
        or(1)           cr0<1>UD        cr0<0,1,0>UD    0x00000030UD    { align1 WE_all 1N switch };
        add(8)          g21<1>F         g10<8,8,1>F     g11<8,8,1>F     { align1 1Q };
        or(1)           cr0<1>UD        cr0<0,1,0>UD    0x00000080UD    { align1 WE_all 1N switch };
        mul(8)          g22<1>F         g12<8,8,1>F     0x3f000000F     { align1 1Q };
    ");
    let mut t = ThreadState::new(8, 0xFF);
    for lane in 0..8 {
        put(&mut t, 10 * 32 + 4 * lane, 4, 1.0f32.to_bits() as u64);
        put(&mut t, 11 * 32 + 4 * lane, 4, 9e-8f32.to_bits() as u64);
        put(&mut t, 12 * 32 + 4 * lane, 4, 1e-38f32.to_bits() as u64);
    }
    run_to_eot(&mut t, &k, &mut TestPort::default());
    assert_eq!(t.cr0(), 0xB0);
    let f = |r: usize| f32::from_bits(get(&t, r * 32, 4) as u32);
    assert_eq!(f(20), 1.0 + f32::EPSILON, "RTNE rounds 1 + 9e-8 up");
    assert_eq!(f(21), 1.0, "RTZ truncates");
    assert_eq!(f(22), 5e-39, "denormal preserved and exact");
}

#[test]
fn jmpi_jumps_relative_to_the_next_instruction_when_predicate_holds() {
    let ip = || Addr::arf(ferrite_isa::ArfReg::IP, 0);
    let mk = |pred: bool| {
        let mut j = Instruction::alu2(
            Opcode::Jmpi,
            ExecSize::S1,
            Dst::new(ip(), Type::UD),
            Src::Reg(RegSrc::new(ip(), Type::UD, Region::SCALAR)),
            Src::Imm(ferrite_isa::Imm::d(16)),
        );
        j.we_all = true;
        if pred {
            j.predicate = Some(ferrite_isa::Predicate {
                ctrl: ferrite_isa::PredCtrl::Normal,
                inverse: false,
            });
        }
        j
    };
    let mov = |v: i32| {
        Instruction::alu1(
            Opcode::Mov,
            ExecSize::S8,
            Dst::grf(20, Type::D),
            Src::Imm(ferrite_isa::Imm::d(v)),
        )
    };
    for (pred, flag) in [(false, 0), (true, 1), (true, 0)] {
        let k = kernel(&[mov(0), mk(pred), mov(1), mov_add(), eot()], false);
        fn mov_add() -> Instruction {
            Instruction::alu2(
                Opcode::Add,
                ExecSize::S8,
                Dst::grf(20, Type::D),
                Src::Reg(RegSrc::grf(20, 0, Type::D, Region::new(8, 8, 1))),
                Src::Imm(ferrite_isa::Imm::d(1)),
            )
        }
        let mut t = ThreadState::new(8, 0xFF);
        t.set_flags(flag);
        run_to_eot(&mut t, &k, &mut TestPort::default());
        // Taken: mov(1) is skipped, g20 = 0 + 1; not taken: g20 = 1 + 1.
        let got = dwords(&t, 20, 1)[0];
        let taken = !pred || flag == 1;
        assert_eq!(got, if taken { 1 } else { 2 }, "pred {pred} flag {flag}");
    }
}

/// ce0 (`mask0`) shows the channels the control flow has enabled, without the dispatch
/// mask: in a thread dispatched with channels 0..n-1 the undispatched channels read as
/// enabled, and channels an `if` switched off read as disabled. `fbl` of it inside a
/// divergent `if` gives the first channel that took the branch, because a compute thread's
/// dispatched channels are the low ones; ANDed with sr0.2 it is the exact live set. An
/// instruction of channel group 2Q sees the mask shifted down by 8.
#[test]
fn ce0_reads_control_flow_enables_without_the_dispatch_mask() {
    let k = asm(r"
        cmp.l.f0.0(16)  null<1>D        g10<8,8,1>D     0D              { align1 1H };
        (+f0.0) if(16)  JIP: LEND       UIP: LEND                       { align1 1H };
        fbl(1)          g20<1>UD        mask0<0,1,0>UD                  { align1 WE_all 1N };
        mov(1)          g20.1<1>UD      mask0<0,1,0>UD                  { align1 WE_all 1N };
        and(1)          g20.2<1>UD      mask0<0,1,0>UD  sr0.2<0,1,0>UD  { align1 WE_all 1N };
        mov(1)          g20.3<1>UD      mask0<0,1,0>UD                  { align1 WE_all 2Q };
    LEND:
        endif(16)       JIP: LEXIT                                      { align1 1H };
    LEXIT:
        mov(1)          g20.4<1>UD      mask0<0,1,0>UD                  { align1 WE_all 1N };
    ");
    let mut rng = Rng::new(0xce0);
    for case in 0..64 {
        // Dispatched channels 0..n-1 (a packed dispatch mask), a random branch.
        let n = 1 + rng.below(16) as u32;
        let dispatch = if n == 16 { 0xFFFF } else { (1u32 << n) - 1 };
        let input: Vec<i32> = (0..16).map(|_| rng.below(3) as i32 - 1).collect();
        let taken = (0..16).fold(0u32, |m, l| m | (u32::from(input[l] < 0) << l));
        let mut t = ThreadState::new(16, dispatch);
        set_dwords(&mut t, 10, &input);
        set_dwords(&mut t, 20, &[-1; 8]);
        run_to_eot(&mut t, &k, &mut TestPort::default());
        let g20: Vec<u32> = dwords(&t, 20, 8).iter().map(|&x| x as u32).collect();
        let ctx = format!("case {case}: dispatch {dispatch:#x} taken {taken:#x} got {g20:x?}");
        // Undispatched channels are never switched off: they read as enabled.
        let ce = (taken & dispatch) | (0xFFFF & !dispatch);
        if taken & dispatch == 0 {
            // No live channel takes the branch: the block is skipped.
            assert_eq!(&g20[..4], &[u32::MAX; 4], "{ctx}");
        } else {
            assert_eq!(g20[0], (taken & dispatch).trailing_zeros(), "{ctx}");
            assert_eq!(g20[1], ce, "{ctx}");
            assert_eq!(g20[2], taken & dispatch, "{ctx}");
            assert_eq!(g20[3], ce >> 8, "{ctx}");
        }
        // After the endif every channel is enabled again.
        assert_eq!(g20[4], 0xFFFF, "{ctx}");
    }
}
