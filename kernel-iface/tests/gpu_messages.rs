//! Data-port messages, dispatch variants and thread payload on the simulated GPU, through
//! EXECBUFFER2: out-of-bounds reads, byte/word scattered, A64, scratch OWord blocks, SIMD8
//! dispatch with a partial thread, 3-D group ids in R0, indirect walkers.

mod gpu_common;

use gpu_common::*;

#[test]
fn out_of_bounds_reads_return_zero_and_scattered_bytes_and_words() {
    // BTI 1: 10 dwords of input (surface size 40 bytes, the BO is larger and filled).
    // BTI 2: untyped copy of in[linear] (lanes >= 10 read 0).
    // BTI 3: byte scattered write of (linear + 1) & 0xFF at byte `linear`, surface of 13
    //        bytes: with the RAW size trick the dword holding byte 12 is inside, so bytes
    //        0..15 are written, the rest dropped.
    // BTI 4: word scattered read of in as 16-bit halves at 2 * linear (bounds 40 bytes).
    let (g, data) = compute_setup(&[4096, 4096, 4096, 4096]);
    let input: Vec<u32> = (0..32).map(|i| 0x1111_0000 + i * 0x0101).collect();
    g.write_u32s(data[0], 0, &input);
    g.write_u32s(data[2], 0, &[0xFFFF_FFFF; 16]);
    let asm = format!(
        "{LINEAR16}
send(16) g20<1>UD g10<8,8,1>UD 0x04205e01 dp data 1 MsgDesc: untyped read {{ align1 1H }};
sends(16) nullUD g10UD g20UD 0x04025e02 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
add(16) g22<1>UD g4<8,8,1>UD 0x00000001UD {{ align1 1H }};
sends(16) nullUD g4UD g22UD 0x04030103 0x00000080 data MsgDesc: byte scattered write {{ align1 1H }};
shl(16) g24<1>UD g4<8,8,1>UD 0x00000001UD {{ align1 1H }};
send(16) g26<1>UD g24<8,8,1>UD 0x04210501 data MsgDesc: word scattered read {{ align1 1H }};
and(16) g26<1>UD g26<8,8,1>UD 0x0000ffffUD {{ align1 1H }};
sends(16) nullUD g10UD g26UD 0x04025e04 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 32,
        push: [32, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[
            (data[0], 40),
            (data[1], 4096),
            (data[2], 13),
            (data[3], 4096),
        ],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let copy = g.read_u32s(data[1], 0, 32);
    for (i, &v) in copy.iter().enumerate() {
        assert_eq!(v, if i < 10 { input[i] } else { 0 }, "untyped read {i}");
    }
    let mut bytes = vec![0u8; 32];
    g.bos[data[2]].map.read(0, &mut bytes);
    for (i, &b) in bytes.iter().enumerate() {
        let want = if i < 16 { (i + 1) as u8 } else { 0xFF };
        assert_eq!(b, want, "byte {i}");
    }
    let words = g.read_u32s(data[3], 0, 32);
    for (i, &w) in words.iter().enumerate() {
        let half = if i < 20 {
            let d = input[i / 2];
            if i % 2 == 0 {
                d & 0xFFFF
            } else {
                d >> 16
            }
        } else {
            0
        };
        assert_eq!(w, half, "word {i}");
    }
}

#[test]
fn dword_byte_scattered_accesses_across_a_dword_are_checked_per_dword() {
    // Each lane l reads and writes 4 bytes at 4l + 2, one dword byte scattered message:
    // every access crosses a dword boundary, and the surfaces end inside one such access.
    // BTI 1: 10 dwords of input (40 bytes): lane 9 reads bytes 38..41, of which 38 and 39
    //        lie in the last dword inside, 40 and 41 in the first outside (read as 0).
    // BTI 3: dword byte scattered write of 0xA0B0C0D0 + l at 4l + 2, surface of 13 bytes
    //        (dwords 0..3 inside): lane 3's bytes 14 and 15 are written, 16 and 17 are not.
    // BTI 4: what each lane read, as one untyped write.
    let (g, data) = compute_setup(&[4096, 4096, 4096, 4096]);
    let input: Vec<u32> = (0..32).map(|i| 0x1111_0000 + i * 0x0101).collect();
    g.write_u32s(data[0], 0, &input);
    g.write_u32s(data[2], 0, &[0xFFFF_FFFF; 16]);
    let asm = format!(
        "{LINEAR16}
add(16) g20<1>UD g10<8,8,1>UD 0x00000002UD {{ align1 1H }};
add(16) g22<1>UD g4<8,8,1>UD 0xa0b0c0d0UD {{ align1 1H }};
sends(16) nullUD g20UD g22UD 0x04030903 0x00000080 data MsgDesc: byte scattered write {{ align1 1H }};
send(16) g26<1>UD g20<8,8,1>UD 0x04210901 data MsgDesc: dword byte scattered read {{ align1 1H }};
sends(16) nullUD g10UD g26UD 0x04025e04 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 32,
        push: [32, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[
            (data[0], 40),
            (data[1], 4096),
            (data[2], 13),
            (data[3], 4096),
        ],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let input_bytes: Vec<u8> = input.iter().flat_map(|w| w.to_le_bytes()).collect();
    let read = g.read_u32s(data[3], 0, 32);
    for (l, &v) in read.iter().enumerate() {
        let want: Vec<u8> = (4 * l + 2..4 * l + 6)
            .map(|b| if b < 40 { input_bytes[b] } else { 0 })
            .collect();
        let want = u32::from_le_bytes(want.try_into().expect("four bytes"));
        assert_eq!(v, want, "lane {l} read");
    }
    let mut bytes = vec![0u8; 32];
    g.bos[data[2]].map.read(0, &mut bytes);
    for (i, &b) in bytes.iter().enumerate() {
        let want = if (2..16).contains(&i) {
            let l = (i - 2) / 4;
            (0xA0B0_C0D0u32 + l as u32).to_le_bytes()[(i - 2) % 4]
        } else {
            0xFF
        };
        assert_eq!(b, want, "byte {i}");
    }
}

#[test]
fn a64_untyped_write_to_a_pushed_address() {
    let (g, data) = compute_setup(&[4096]);
    let base = g.bos[data[0]].addr + 0x100;
    let asm = format!(
        "{LINEAR16}
mov(8) g30<1>UQ g10<8,8,1>UD {{ align1 1Q }};
mov(8) g32<1>UQ g11<8,8,1>UD {{ align1 2Q }};
add(8) g30<1>UQ g30<4,4,1>UQ g1.1<0,1,0>UQ {{ align1 1Q }};
add(8) g32<1>UQ g32<4,4,1>UQ g1.1<0,1,0>UQ {{ align1 2Q }};
add(16) g12<1>UD g4<8,8,1>UD 0x00000064UD {{ align1 1H }};
sends(16) nullUD g30UD g12UD 0x08065efd 0x00000080 dp data 1 MsgDesc: A64 untyped write {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 32,
        push: [32, 0, base as u32, (base >> 32) as u32, 0, 0, 0, 0],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0x100, 33);
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(v, if i < 32 { i as u32 + 100 } else { 0 }, "element {i}");
    }
}

#[test]
fn scratch_oword_blocks_are_private_per_thread() {
    // Each thread writes its 16 linear ids to its scratch slot (4 OWords at offset 0), all
    // threads of the group meet at a barrier, then each reads its slot back and stores it.
    // Threads sharing a slot would read another thread's values.
    let mut setup = compute_setup(&[4096]);
    let scratch_addr = 0x80_0000u64;
    setup.0.bo(scratch_addr, 1024 * 168);
    let (g, data) = setup;
    let asm = format!(
        "{LINEAR16}
mov(8) g50<1>UD 0x00000000UD {{ align1 WE_all 1Q }};
and(1) g50.5<1>UD g0.5<0,1,0>UD 0xfffffc00UD {{ align1 WE_all 1N }};
mov(16) g51<1>UD g4<8,8,1>UD {{ align1 1H }};
send(16) null<1>UD g50<8,8,1>UD 0x060a03fd data MsgDesc: OWord block write {{ align1 WE_all 1H }};
mov(8)  g30<1>UD  0x00000000UD {{ align1 WE_all 1Q }};
and(1)  g30.2<1>UD g0.2<0,1,0>UD 0x8f000000UD {{ align1 WE_all 1N }};
send(16) null<1>UW g30<8,8,1>UD 0x02000004 gateway MsgDesc: (barrier msg) mlen 1 rlen 0 {{ align1 WE_all 1H }};
wait(1) n0<1>UD {{ align1 WE_all 1N }};
send(16) g40<1>UD g50<8,8,1>UD 0x022803fd data MsgDesc: OWord block read {{ align1 WE_all 1H }};
sends(16) nullUD g10UD g40UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        groups: [4, 1, 1],
        barrier: true,
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4096)],
        scratch: Some((scratch_addr, 0)),
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 256);
    assert_eq!(out, (0..256).collect::<Vec<u32>>());
}

#[test]
fn simd8_dispatch_with_a_partial_last_thread() {
    let (g, data) = compute_setup(&[4096]);
    g.write_u32s(data[0], 0, &[0xDEAD_BEEF; 64]);
    let asm = format!(
        "{LINEAR8}
add(8) g12<1>UD g4<8,8,1>UD 0x00000005UD {{ align1 1Q }};
sends(8) nullUD g10UD g12UD 0x02026e01 0x00000040 dp data 1 MsgDesc: untyped write {{ align1 1Q }};
{EOT8}"
    );
    let d = Dispatch {
        asm: &asm,
        simd: 8,
        group_size: 20,
        groups: [2, 1, 1],
        push: [20, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4096)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 64);
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(
            v,
            if i < 40 { i as u32 + 5 } else { 0xDEAD_BEEF },
            "element {i}"
        );
    }
}

fn group_id_kernel() -> String {
    // out[(z * 2 + y) * 3 + x] = x | y << 8 | z << 16 for a 3 x 2 x 2 grid.
    format!(
        "
mul(16) g40<1>UD g0.7<0,1,0>UD 0x00000002UD {{ align1 1H }};
add(16) g40<1>UD g40<8,8,1>UD g0.6<0,1,0>UD {{ align1 1H }};
mul(16) g40<1>UD g40<8,8,1>UD 0x00000003UD {{ align1 1H }};
add(16) g40<1>UD g40<8,8,1>UD g0.1<0,1,0>UD {{ align1 1H }};
shl(16) g42<1>UD g40<8,8,1>UD 0x00000002UD {{ align1 1H }};
shl(16) g44<1>UD g0.6<0,1,0>UD 0x00000008UD {{ align1 1H }};
shl(16) g46<1>UD g0.7<0,1,0>UD 0x00000010UD {{ align1 1H }};
or(16)  g48<1>UD g44<8,8,1>UD g46<8,8,1>UD {{ align1 1H }};
or(16)  g48<1>UD g48<8,8,1>UD g0.1<0,1,0>UD {{ align1 1H }};
sends(16) nullUD g42UD g48UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    )
}

#[test]
fn group_ids_of_a_3d_grid_in_r0() {
    let (g, data) = compute_setup(&[4096]);
    let asm = group_id_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 16,
        groups: [3, 2, 2],
        buffers: &[(data[0], 4096)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 13);
    let mut want = Vec::new();
    for z in 0..2u32 {
        for y in 0..2u32 {
            for x in 0..3u32 {
                want.push(x | y << 8 | z << 16);
            }
        }
    }
    want.push(0);
    assert_eq!(out, want);
}

#[test]
fn indirect_walker_takes_counts_from_the_dispatch_registers() {
    let (g, data) = compute_setup(&[4096]);
    let asm = group_id_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 16,
        // The walker's own counts are zero: only the registers say 3 x 2 x 2.
        groups: [0, 0, 0],
        indirect: Some([3, 2, 2]),
        buffers: &[(data[0], 4096)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 12);
    assert_eq!(out[11], 2 | 1 << 8 | 1 << 16);
    assert_eq!(out[4], 1 | 1 << 8);
}

#[test]
fn simd32_dispatch_with_two_message_halves_and_a_partial_thread() {
    // Group of 40 at SIMD32: 2 threads, the second with 8 channels. Data-port messages go as
    // two SIMD16 halves (1H, 2H) as Mesa emits them.
    let (g, data) = compute_setup(&[4096]);
    g.write_u32s(data[0], 0, &[0xDEAD_BEEF; 128]);
    let asm = format!(
        "
mov(8)  g3<1>UW   0x76543210V {{ align1 WE_all 1Q }};
add(8)  g3.8<1>UW g3<8,8,1>UW 0x0008UW {{ align1 WE_all 1Q }};
add(16) g4<1>UW   g3<16,16,1>UW 0x0010UW {{ align1 WE_all 1H }};
mov(16) g6<1>UD   g3<16,16,1>UW {{ align1 1H }};
mov(16) g8<1>UD   g4<16,16,1>UW {{ align1 2H }};
shl(16) g12<1>UD  g2.7<0,1,0>UD 0x00000005UD {{ align1 1H }};
mul(16) g14<1>UD  g0.1<0,1,0>UD g1<0,1,0>UD {{ align1 1H }};
add(16) g12<1>UD  g12<8,8,1>UD g14<8,8,1>UD {{ align1 1H }};
add(16) g6<1>UD   g6<8,8,1>UD g12<8,8,1>UD {{ align1 1H }};
add(16) g8<1>UD   g8<8,8,1>UD g12<8,8,1>UD {{ align1 2H }};
shl(16) g16<1>UD  g6<8,8,1>UD 0x00000002UD {{ align1 1H }};
shl(16) g18<1>UD  g8<8,8,1>UD 0x00000002UD {{ align1 2H }};
add(16) g20<1>UD  g6<8,8,1>UD 0x00000009UD {{ align1 1H }};
add(16) g22<1>UD  g8<8,8,1>UD 0x00000009UD {{ align1 2H }};
sends(16) nullUD g16UD g20UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
sends(16) nullUD g18UD g22UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 2H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        simd: 32,
        group_size: 40,
        groups: [2, 1, 1],
        push: [40, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4096)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 128);
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(
            v,
            if i < 80 { i as u32 + 9 } else { 0xDEAD_BEEF },
            "element {i}"
        );
    }
}

fn image_surface(addr: u64, format: u64, w: u64, h: u64, pitch: u64) -> Vec<u32> {
    kernel_iface::genxml::RenderSurfaceState {
        surface_type: 1, // SURFTYPE_2D
        surface_format: format,
        surface_vertical_alignment: 1,
        surface_horizontal_alignment: 1,
        width: w - 1,
        height: h - 1,
        surface_pitch: pitch - 1,
        surface_base_address: addr,
        ..Default::default()
    }
    .to_dwords()
}

#[test]
fn typed_writes_and_reads_of_linear_2d_images() {
    // 4 SIMD8 threads; thread t handles row y = t, x = lane.
    // BTI 1: R32_UINT 8x3 image: texel (x, y) = x + 100 y (row 3 is outside: dropped).
    // BTI 2: R8G8B8A8_UINT 8x4 image read with channels X and W, stored to BTI 3 (Gen9's
    // typed reads cannot read UNORM formats).
    let (g, data) = compute_setup(&[4096, 4096, 4096]);
    g.write_u32s(data[0], 0, &[0xDEAD_BEEF; 64]);
    let mut rgba = Vec::new();
    for y in 0..4u8 {
        for x in 0..8u8 {
            rgba.extend_from_slice(&[x * 10, y * 20, 7, 255 - x]);
        }
        rgba.extend_from_slice(&[0; 32]); // pitch 64 bytes
    }
    g.write(data[1], 0, &rgba);
    let asm = format!(
        "{LINEAR8}
mov(8) g12<1>UD g3<8,8,1>UW {{ align1 1Q }};
mov(8) g13<1>UD g2.7<0,1,0>UD {{ align1 1Q }};
mul(8) g14<1>UD g13<8,8,1>UD 0x00000064UD {{ align1 1Q }};
add(8) g14<1>UD g14<8,8,1>UD g12<8,8,1>UD {{ align1 1Q }};
sends(8) nullUD g12UD g14UD 0x04035e01 0x00000040 dp data 1 MsgDesc: typed write {{ align1 1Q }};
send(8) g20<1>UD g12<8,8,1>UD 0x04215602 dp data 1 MsgDesc: typed read XW {{ align1 1Q }};
shl(8) g16<1>UD g4<8,8,1>UD 0x00000003UD {{ align1 1Q }};
sends(8) nullUD g16UD g20UD 0x02026c03 0x00000080 dp data 1 MsgDesc: untyped write XY {{ align1 1Q }};
{EOT8}"
    );
    let d = Dispatch {
        asm: &asm,
        simd: 8,
        group_size: 32,
        push: [32, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4), (data[1], 4), (data[2], 4096)],
        ..Default::default()
    };
    build_dispatch(&g, &d, KERNEL_BO, STATE_BO, BATCH_BO);
    // Replace the buffer surfaces of BTI 1 and 2 by images.
    let ss1 = image_surface(g.bos[data[0]].addr, 215, 8, 3, 32);
    let ss2 = image_surface(g.bos[data[1]].addr, 203, 8, 4, 64);
    g.write_u32s(STATE_BO, SS_OFFSET as usize, &ss1);
    g.write_u32s(STATE_BO, SS_OFFSET as usize + 64, &ss2);
    assert_eq!(g.submit(BATCH_BO).unwrap(), Outcome::Ok);
    let img = g.read_u32s(data[0], 0, 32);
    for (i, &v) in img.iter().enumerate() {
        let (x, y) = (i % 8, i / 8);
        let want = if y < 3 {
            (x + 100 * y) as u32
        } else {
            0xDEAD_BEEF
        };
        assert_eq!(v, want, "texel ({x}, {y})");
    }
    let out = g.read_u32s(data[2], 0, 64);
    for i in 0..32 {
        let x = i % 8;
        assert_eq!(out[2 * i], (x * 10) as u32, "red of texel {i}");
        assert_eq!(out[2 * i + 1], (255 - x) as u32, "alpha of texel {i}");
    }
}

/// A 64-bit value per invocation, from its linear index, with carries between the dwords
/// when added and both signs in the high dword.
fn a64_atomic_operand(i: u64) -> u64 {
    let lo = (i as u32).wrapping_mul(0x9E37_79B1);
    let hi = (i as u32).wrapping_mul(0x85EB_CA6B);
    u64::from(lo) | (u64::from(hi) << 32)
}

/// The A64 untyped atomic message with 64-bit data (DC1 type 0x12, message control bit 4),
/// SIMD8, with the old value returned: 256 invocations in 4 groups of 8 threads, 64 of
/// them on each of 4 qwords, for every integer operation. The final memory is checked
/// against a CPU fold of the operands, the returned old values for add (they chain from
/// the initial value to the final one in some order) and exchange (a permutation).
#[test]
fn a64_atomics_with_64bit_data_under_contention_match_reference() {
    const N: u64 = 256;
    const ADDRS: u64 = 4;
    let init: [u64; ADDRS as usize] = [
        0x0123_4567_89AB_CDEF,
        0xFFFF_FFFF_0000_0001,
        0x8000_0000_0000_0000,
        0,
    ];
    // (name, op, data operands)
    let ops: [(&str, u32, u32); 10] = [
        ("and", 1, 1),
        ("or", 2, 1),
        ("xor", 3, 1),
        ("mov", 4, 1),
        ("add", 7, 1),
        ("imax", 10, 1),
        ("imin", 11, 1),
        ("umax", 12, 1),
        ("umin", 13, 1),
        ("cmpwr", 14, 2),
    ];
    for (name, op, nops) in ops {
        let (g, data) = compute_setup(&[4096, 4096]);
        let mem = g.bos[data[0]].addr;
        let out = g.bos[data[1]].addr;
        let words: Vec<u32> = init
            .iter()
            .flat_map(|v| [*v as u32, (*v >> 32) as u32])
            .collect();
        g.write_u32s(data[0], 0, &words);
        // Function control: BTI 253, message control = op | 64-bit data | return,
        // type 0x12; SENDS with the addresses in src0 (mlen 2) and the data in src1.
        let fc = 0xFDu32 | ((op | 0x30) << 8) | (0x12 << 14);
        let desc = (2u32 << 25) | (2 << 20) | fc;
        let ex_desc = (2 * nops) << 6;
        // The compare value (0) then the new value for CMPWR, else the operand.
        let data_reg = if nops == 2 { 22 } else { 20 };
        let asm = format!(
            "{LINEAR8}
and(8) g12<1>UD g4<8,8,1>UD 0x00000003UD {{ align1 1Q }};
shl(8) g12<1>UD g12<8,8,1>UD 0x00000003UD {{ align1 1Q }};
mov(8) g30<1>UQ g12<8,8,1>UD {{ align1 1Q }};
add(8) g30<1>UQ g30<4,4,1>UQ g1.1<0,1,0>UQ {{ align1 1Q }};
mov(8) g20<1>UD 0x00000000UD {{ align1 1Q }};
mov(8) g21<1>UD 0x00000000UD {{ align1 1Q }};
mul(8) g14<1>UD g4<8,8,1>UD 0x9e3779b1UD {{ align1 1Q }};
mul(8) g15<1>UD g4<8,8,1>UD 0x85ebca6bUD {{ align1 1Q }};
mov(8) g{data_reg}<2>UD g14<8,8,1>UD {{ align1 1Q }};
mov(8) g{data_reg}.1<2>UD g15<8,8,1>UD {{ align1 1Q }};
sends(8) g40UD g30UD g20UD {desc:#010x} {ex_desc:#010x} dp data 1 MsgDesc: A64 untyped atomic {{ align1 1Q }};
shl(8) g12<1>UD g4<8,8,1>UD 0x00000003UD {{ align1 1Q }};
mov(8) g32<1>UQ g12<8,8,1>UD {{ align1 1Q }};
add(8) g32<1>UQ g32<4,4,1>UQ g1.2<0,1,0>UQ {{ align1 1Q }};
sends(8) nullUD g32UD g40UD 0x04068cfd 0x00000080 dp data 1 MsgDesc: A64 scattered write {{ align1 1Q }};
{EOT8}"
        );
        let d = Dispatch {
            asm: &asm,
            simd: 8,
            group_size: 64,
            groups: [4, 1, 1],
            push: [
                64,
                0,
                mem as u32,
                (mem >> 32) as u32,
                out as u32,
                (out >> 32) as u32,
                0,
                0,
            ],
            ..Default::default()
        };
        assert_eq!(run(&g, &d), Outcome::Ok, "{name}");
        let q = |w: &[u32], k: usize| u64::from(w[2 * k]) | (u64::from(w[2 * k + 1]) << 32);
        let fin = g.read_u32s(data[0], 0, 2 * ADDRS as usize);
        let ret = g.read_u32s(data[1], 0, 2 * N as usize);
        for a in 0..ADDRS {
            let lanes: Vec<u64> = (0..N).filter(|i| i % ADDRS == a).collect();
            let start = init[a as usize];
            let got = q(&fin, a as usize);
            let old: Vec<u64> = lanes.iter().map(|i| q(&ret, *i as usize)).collect();
            let operand = |i: u64| a64_atomic_operand(i);
            let fold = |f: fn(u64, u64) -> u64| lanes.iter().fold(start, |m, i| f(m, operand(*i)));
            let ctx = format!("{name}: qword {a}, initial {start:#x}");
            match op {
                1 => assert_eq!(got, fold(|m, v| m & v), "{ctx}"),
                2 => assert_eq!(got, fold(|m, v| m | v), "{ctx}"),
                3 => assert_eq!(got, fold(|m, v| m ^ v), "{ctx}"),
                10 => assert_eq!(got, fold(|m, v| (m as i64).max(v as i64) as u64), "{ctx}"),
                11 => assert_eq!(got, fold(|m, v| (m as i64).min(v as i64) as u64), "{ctx}"),
                12 => assert_eq!(got, fold(|m, v| m.max(v)), "{ctx}"),
                13 => assert_eq!(got, fold(|m, v| m.min(v)), "{ctx}"),
                7 => {
                    assert_eq!(got, fold(|m, v| m.wrapping_add(v)), "{ctx}");
                    // Each returned value plus its operand is another returned value or
                    // the final one, and the chain starts at the initial value.
                    let mut next: Vec<u64> = lanes
                        .iter()
                        .zip(&old)
                        .map(|(i, o)| o.wrapping_add(operand(*i)))
                        .collect();
                    let mut starts = old.clone();
                    starts.sort_unstable();
                    next.push(start);
                    next.sort_unstable();
                    starts.push(got);
                    starts.sort_unstable();
                    assert_eq!(next, starts, "{ctx}: returned values do not chain");
                }
                4 => {
                    // Every operand is returned once by the next exchange or is final.
                    let mut seen = old.clone();
                    seen.push(got);
                    seen.sort_unstable();
                    let mut want: Vec<u64> = lanes.iter().map(|i| operand(*i)).collect();
                    want.push(start);
                    want.sort_unstable();
                    assert_eq!(seen, want, "{ctx}");
                }
                _ => {
                    // CMPWR with compare value 0: where memory starts at 0 exactly one lane
                    // wins and every later lane sees its value; elsewhere nothing changes.
                    if start == 0 {
                        let winners: Vec<u64> = lanes
                            .iter()
                            .zip(&old)
                            .filter(|(_, o)| **o == 0)
                            .map(|(i, _)| *i)
                            .collect();
                        assert_eq!(winners.len(), 1, "{ctx}: winners {winners:?}");
                        assert_eq!(got, operand(winners[0]), "{ctx}");
                        for (i, o) in lanes.iter().zip(&old) {
                            assert!(*o == 0 || *o == got, "{ctx}: lane {i} saw {o:#x}");
                        }
                    } else {
                        assert_eq!(got, start, "{ctx}");
                        assert!(old.iter().all(|o| *o == start), "{ctx}");
                    }
                }
            }
        }
    }
}
