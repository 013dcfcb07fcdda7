//! Integer dot products (`SPV_KHR_integer_dot_product`) on the simulated GPU at SIMD8/16/32:
//! OpSDot, OpUDot, OpSUDot and their AccSat forms on four packed bytes with a 32-bit result
//! (the back end's `add.sat` on D / UD), on `i8vec4` with a 16-bit result (the narrow
//! saturating add of the `lower_sat_add` pass) and on `i32vec2` with a 64-bit result (its
//! 64-bit form). Operands are edge values and a fixed-seed pseudo-random mix; the reference
//! is computed exactly in i128 here, independently of the compiler. Assembled with spirv-as
//! for Vulkan 1.2 and checked by spirv-val; skipped when the tools are not installed.

mod sim_common;

use sim_common::*;

const OPS: [&str; 6] = [
    "OpSDot",
    "OpUDot",
    "OpSUDot",
    "OpSDotAccSat",
    "OpUDotAccSat",
    "OpSUDotAccSat",
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// Four bytes packed in a u32, 32-bit result.
    Packed,
    /// `i8vec4` (the u32 bitcast), 16-bit result.
    Bytes16,
    /// `i32vec2` (two consecutive words), 64-bit result.
    Words64,
}

fn signs(op: &str) -> (bool, bool) {
    match op {
        "OpSDot" | "OpSDotAccSat" => (true, true),
        "OpUDot" | "OpUDotAccSat" => (false, false),
        _ => (true, false),
    }
}

fn res_bits(f: Form) -> u32 {
    match f {
        Form::Packed => 32,
        Form::Bytes16 => 16,
        Form::Words64 => 64,
    }
}

/// The module: `out[i] = OP(a[i], b[i](, acc[i]))`. `a`, `b` are u32 arrays (two words per
/// invocation for `Words64`); `acc` and `out` are u32 arrays, u64 arrays for `Words64`.
fn shader(op: &str, f: Form) -> String {
    let (sa, _) = signs(op);
    let unsigned = op.starts_with("OpUDot");
    let s = u32::from(!unsigned);
    let acc_sat = op.ends_with("AccSat");
    let (caps, types, load_ops, wide) = match f {
        Form::Packed => (
            "OpCapability DotProductInput4x8BitPacked",
            format!("%tr = OpTypeInt 32 {s}"),
            "%va = OpCopyObject %u32 %a\n%vb = OpCopyObject %u32 %b".to_string(),
            false,
        ),
        Form::Bytes16 => (
            "OpCapability Int8\nOpCapability Int16\nOpCapability DotProductInput4x8Bit",
            format!(
                "%te = OpTypeInt 8 {}\n%tv = OpTypeVector %te 4\n%tr = OpTypeInt 16 {s}",
                u32::from(sa)
            ),
            "%va = OpBitcast %tv %a\n%vb = OpBitcast %tv %b".to_string(),
            false,
        ),
        Form::Words64 => (
            "OpCapability Int64\nOpCapability DotProductInputAll",
            format!(
                "%te = OpTypeInt 32 {}\n%tv = OpTypeVector %te 2\n%tr = OpTypeInt 64 {s}",
                u32::from(sa)
            ),
            "%i2 = OpIMul %u32 %i %c2\n%i21 = OpIAdd %u32 %i2 %c1\n\
             %pa1 = OpAccessChain %pu %in_a %c0 %i21\n%a1 = OpLoad %u32 %pa1\n\
             %pb1 = OpAccessChain %pu %in_b %c0 %i21\n%b1 = OpLoad %u32 %pb1\n\
             %pa0 = OpAccessChain %pu %in_a %c0 %i2\n%a0 = OpLoad %u32 %pa0\n\
             %pb0 = OpAccessChain %pu %in_b %c0 %i2\n%b0 = OpLoad %u32 %pb0\n\
             %ua = OpCompositeConstruct %v2u32 %a0 %a1\n%ub = OpCompositeConstruct %v2u32 %b0 %b1\n\
             %va = OpBitcast %tv %ua\n%vb = OpBitcast %tv %ub"
                .to_string(),
            true,
        ),
    };
    let packed = if f == Form::Packed {
        " PackedVectorFormat4x8Bit"
    } else {
        ""
    };
    let (acc_load, store) = match f {
        Form::Packed => (
            "%accw = OpLoad %u32 %pacc\n%acc = OpBitcast %tr %accw",
            "%rw = OpBitcast %u32 %r\nOpStore %pout %rw",
        ),
        Form::Bytes16 => (
            "%accw = OpLoad %u32 %pacc\n%acc = OpUConvert %tr %accw",
            "%rw = OpUConvert %u32 %r\nOpStore %pout %rw",
        ),
        Form::Words64 => (
            "%accw = OpLoad %u64 %pacc\n%acc = OpBitcast %tr %accw",
            "%rw = OpBitcast %u64 %r\nOpStore %pout %rw",
        ),
    };
    // Bytes16's result is signed or unsigned 16-bit; OpUConvert needs an unsigned source
    // type only by convention, so a bitcast goes first for the signed ones.
    let (acc_load, store) = if f == Form::Bytes16 && s == 1 {
        (
            "%accw = OpLoad %u32 %pacc\n%acc16 = OpUConvert %u16 %accw\n%acc = OpBitcast %tr %acc16"
                .to_string(),
            "%r16 = OpBitcast %u16 %r\n%rw = OpUConvert %u32 %r16\nOpStore %pout %rw".to_string(),
        )
    } else {
        (acc_load.to_string(), store.to_string())
    };
    let u16_decl = if f == Form::Bytes16 && s == 1 {
        "%u16 = OpTypeInt 16 0"
    } else {
        ""
    };
    let (acc_ty, acc_stride) = if wide { ("%u64", 8) } else { ("%u32", 4) };
    let acc_operand = if acc_sat { " %acc" } else { "" };
    dedup_types(&format!(
        "OpCapability Shader
OpCapability DotProduct
{caps}
OpExtension \"SPV_KHR_integer_dot_product\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid %in_a %in_b %in_acc %out
OpExecutionMode %main LocalSize 16 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %rtw ArrayStride {acc_stride}
OpMemberDecorate %blkw 0 Offset 0
OpDecorate %blkw Block
OpDecorate %in_a DescriptorSet 0
OpDecorate %in_a Binding 0
OpDecorate %in_b DescriptorSet 0
OpDecorate %in_b Binding 1
OpDecorate %in_acc DescriptorSet 0
OpDecorate %in_acc Binding 2
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 3
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
{u64_decl}
{u16_decl}
%v2u32 = OpTypeVector %u32 2
%v3u32 = OpTypeVector %u32 3
{types}
%rta = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %rta
%rtw = OpTypeRuntimeArray {acc_ty}
%blkw = OpTypeStruct %rtw
%pblk = OpTypePointer StorageBuffer %blk
%pblkw = OpTypePointer StorageBuffer %blkw
%pu = OpTypePointer StorageBuffer %u32
%pw = OpTypePointer StorageBuffer {acc_ty}
%pin3 = OpTypePointer Input %v3u32
%in_a = OpVariable %pblk StorageBuffer
%in_b = OpVariable %pblk StorageBuffer
%in_acc = OpVariable %pblkw StorageBuffer
%out = OpVariable %pblkw StorageBuffer
%gid = OpVariable %pin3 Input
%c0 = OpConstant %u32 0
%c1 = OpConstant %u32 1
%c2 = OpConstant %u32 2
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u32 %gid
%i = OpCompositeExtract %u32 %g 0
%pa = OpAccessChain %pu %in_a %c0 %i
%a = OpLoad %u32 %pa
%pb = OpAccessChain %pu %in_b %c0 %i
%b = OpLoad %u32 %pb
{load_ops}
%pacc = OpAccessChain %pw %in_acc %c0 %i
{acc_load}
%r = {op} %tr %va %vb{acc_operand}{packed}
%pout = OpAccessChain %pw %out %c0 %i
{store}
OpReturn
OpFunctionEnd
",
        u64_decl = if wide { "%u64 = OpTypeInt 64 0" } else { "" },
    ))
}

/// Drops a type declaration that repeats an earlier one (SPIR-V allows one id per
/// non-aggregate type) and renames its uses to the earlier id.
fn dedup_types(text: &str) -> String {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut renames: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let renamed: Vec<String> = line
            .split(' ')
            .map(|tok| {
                renames
                    .iter()
                    .find(|(from, _)| from == tok)
                    .map_or(tok.to_string(), |(_, to)| to.clone())
            })
            .collect();
        let line = renamed.join(" ");
        if let Some((id, decl)) = line.split_once(" = ") {
            if decl.starts_with("OpTypeInt") || decl.starts_with("OpTypeVector") {
                if let Some((first, _)) = seen.iter().find(|(_, d)| d == decl) {
                    renames.push((id.to_string(), first.clone()));
                    continue;
                }
                seen.push((id.to_string(), decl.to_string()));
            }
        }
        out.push(line);
    }
    out.join("\n") + "\n"
}

fn sext(v: u64, bits: u32) -> i128 {
    i128::from(((v << (64 - bits)) as i64) >> (64 - bits))
}

/// The components of one operand, extended as the instruction reads them.
fn comps(f: Form, words: &[u32], signed: bool) -> Vec<i128> {
    let (raw, bits): (Vec<u64>, u32) = match f {
        Form::Packed | Form::Bytes16 => (
            (0..4)
                .map(|k| u64::from(words[0] >> (8 * k)) & 0xff)
                .collect(),
            8,
        ),
        Form::Words64 => (words.iter().map(|&w| u64::from(w)).collect(), 32),
    };
    raw.into_iter()
        .map(|r| if signed { sext(r, bits) } else { i128::from(r) })
        .collect()
}

/// The specification's result, or None where it is undefined (an AccSat form whose dot
/// product overflows the result type before the accumulation).
fn reference(op: &str, f: Form, a: &[u32], b: &[u32], acc: u64) -> Option<u64> {
    let (sa, sb) = signs(op);
    let n = res_bits(f);
    let mask = u64::MAX >> (64 - n);
    let dot: i128 = comps(f, a, sa)
        .iter()
        .zip(comps(f, b, sb))
        .map(|(x, y)| x * y)
        .sum();
    if !op.ends_with("AccSat") {
        return Some(dot as u64 & mask);
    }
    let (lo, hi, accv) = if op == "OpUDotAccSat" {
        (0, i128::from(mask), i128::from(acc & mask))
    } else {
        let hi = i128::from(mask >> 1);
        (-hi - 1, hi, sext(acc & mask, n))
    };
    // Every product and partial sum must fit (the specification: only the final
    // accumulation saturates).
    let mut s = 0i128;
    for (x, y) in comps(f, a, sa).iter().zip(comps(f, b, sb)) {
        s += x * y;
        if x * y < lo || x * y > hi || s < lo || s > hi {
            return None;
        }
    }
    Some(((dot + accv).clamp(lo, hi) as u64) & mask)
}

/// xorshift64*, fixed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
}

#[test]
fn integer_dot_products_match_the_exact_result_at_each_width() {
    const SEED: u64 = 0x0d07_5eed;
    let n = 64usize;
    let edge_words = [
        0u32,
        1,
        0x7f7f_7f7f,
        0x8080_8080,
        0xffff_ffff,
        0x7fff_ffff,
        0x8000_0000,
        0x01ff_80fe,
    ];
    for f in [Form::Packed, Form::Bytes16, Form::Words64] {
        let per = if f == Form::Words64 { 2 } else { 1 };
        let rb = res_bits(f);
        let mask = u64::MAX >> (64 - rb);
        let edge_accs = [
            0u64,
            1,
            mask >> 1,
            (mask >> 1) + 1,
            mask,
            mask - 3,
            (mask >> 1) - 2,
        ];
        let mut rng = Rng(SEED ^ rb as u64);
        let a: Vec<u32> = (0..n * per)
            .map(|k| {
                if k % 3 == 0 {
                    edge_words[k / 3 % edge_words.len()]
                } else {
                    rng.next()
                }
            })
            .collect();
        let b: Vec<u32> = (0..n * per)
            .map(|k| {
                if k % 2 == 0 {
                    edge_words[(k / 2 + 3) % edge_words.len()]
                } else {
                    rng.next()
                }
            })
            .collect();
        // Small operands too, so that most AccSat cases are defined and the accumulator
        // decides: every fourth invocation multiplies by 1s.
        let b: Vec<u32> = b
            .iter()
            .enumerate()
            .map(|(k, &w)| {
                if (k / per) % 4 == 3 {
                    0x0101_0101 & if f == Form::Words64 { 1 } else { !0 }
                } else {
                    w
                }
            })
            .collect();
        let acc: Vec<u64> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    edge_accs[i / 2 % edge_accs.len()]
                } else {
                    (u64::from(rng.next()) << 32 | u64::from(rng.next())) & mask
                }
            })
            .collect();
        let acc_words = if f == Form::Words64 {
            u64_words(&acc)
        } else {
            acc.iter().map(|&x| x as u32).collect()
        };
        let out_words = vec![0u32; n * if f == Form::Words64 { 2 } else { 1 }];
        for op in OPS {
            let name = format!("{op}_{f:?}");
            let Some(words) = spirv_as(&name, &shader(op, f), "vulkan1.2") else {
                return;
            };
            let build = Build {
                bindings: 4,
                ..Build::default()
            };
            let mut defined = 0;
            for simd in [8, 16, 32] {
                let k = kernel_words(&name, &words, simd, &build);
                let bufs = run_buffers(
                    &k,
                    [(n / 16) as u32, 1, 1],
                    &[a.clone(), b.clone(), acc_words.clone(), out_words.clone()],
                );
                let got: Vec<u64> = if f == Form::Words64 {
                    words_u64(&bufs[3])
                } else {
                    bufs[3].iter().map(|&w| u64::from(w)).collect()
                };
                for i in 0..n {
                    let (ai, bi) = (&a[i * per..(i + 1) * per], &b[i * per..(i + 1) * per]);
                    let Some(want) = reference(op, f, ai, bi, acc[i]) else {
                        continue;
                    };
                    defined += 1;
                    assert_eq!(
                        got[i] & mask,
                        want,
                        "{op} {f:?} SIMD{simd} invocation {i} (seed {SEED:#x}): a={ai:08x?} b={bi:08x?} acc={:#x}",
                        acc[i]
                    );
                }
            }
            assert!(
                defined >= 3 * (n / 4),
                "{op} {f:?}: only {defined} defined results compared"
            );
        }
    }
}
