//! Integer dot products (`SPV_KHR_integer_dot_product`, core in SPIR-V 1.6): `OpSDot`,
//! `OpUDot`, `OpSUDot` and their `AccSat` forms, on vectors of 8-, 16-, 32- and 64-bit
//! integers and on four bytes packed in a 32-bit integer (`PackedVectorFormat4x8Bit`).
//!
//! Gen9 has no dot-product instruction for integers (DP4A arrives with Gen12), so each one
//! becomes multiply-adds in the result's width N: every component is sign- or zero-extended
//! (or truncated) to N bits, multiplied, and summed. The specification asks for the low N
//! bits of the exact dot product, and truncation to N bits commutes with multiplication and
//! addition, so this is exact. The `AccSat` forms add the accumulator with a saturating add
//! (`iadd_sat` for the signed and mixed forms, `uadd_sat` for the unsigned one); an overflow
//! of the dot product itself leaves the result undefined by the specification.

use super::values::FVal;
use super::{invalid, Fe, Res};
use crate::ir::{AluOp, Kind, Type, Value};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op as O};

/// How each operand's components are read.
fn signedness(op: O) -> (bool, bool) {
    match op {
        O::SDot | O::SDotAccSat => (true, true),
        O::UDot | O::UDotAccSat => (false, false),
        // OpSUDot: Vector 1 signed, Vector 2 unsigned.
        _ => (true, false),
    }
}

impl Fe<'_> {
    /// One of the six integer dot-product instructions; `args` are its id operands.
    pub(super) fn integer_dot(&mut self, i: &dr::Instruction, args: &[FVal], rt: u32) -> Res<FVal> {
        let op = i.class.opcode;
        let acc_sat = matches!(op, O::SDotAccSat | O::UDotAccSat | O::SUDotAccSat);
        if args.len() != 2 + usize::from(acc_sat) {
            return invalid(format!("{op:?} operand count"));
        }
        let rt = self.ir_type(rt)?;
        if rt.comps != 1 || rt.kind != Kind::Int {
            return invalid(format!("{op:?} result must be a scalar integer"));
        }
        let (a, b) = (args[0].v()?, args[1].v()?);
        let (ta, tb) = (self.ty(a), self.ty(b));
        let packed = i.operands.iter().any(|o| {
            matches!(
                o,
                Operand::PackedVectorFormat(spirv::PackedVectorFormat::PackedVectorFormat4x8Bit)
            )
        });
        let (sa, sb) = signedness(op);
        let n = rt.bits;
        let mut dot: Option<Value> = None;
        if packed {
            if ta != Type::I32 || tb != Type::I32 {
                return invalid(format!("{op:?}: packed operands must be 32-bit integers"));
            }
            for k in 0..4u64 {
                let x = self.packed_byte(a, k, sa, n)?;
                let y = self.packed_byte(b, k, sb, n)?;
                dot = Some(self.mul_add(dot, x, y, rt)?);
            }
        } else {
            if ta.comps < 2 || ta != tb || ta.kind != Kind::Int || ta.bits > n {
                return invalid(format!(
                    "{op:?}: operands {ta} and {tb} for a {rt} result (integer vectors of one \
                     type, no wider than the result)"
                ));
            }
            for k in 0..ta.comps {
                let x = self.extract(a, k)?;
                let x = self.widen(x, sa, rt)?;
                let y = self.extract(b, k)?;
                let y = self.widen(y, sb, rt)?;
                dot = Some(self.mul_add(dot, x, y, rt)?);
            }
        }
        let dot = dot.ok_or_else(|| super::FrontendError::Invalid("empty dot product".into()))?;
        if !acc_sat {
            return Ok(FVal::V(dot));
        }
        let acc = args[2].v()?;
        if self.ty(acc) != rt {
            return invalid(format!("{op:?}: accumulator type differs from the result"));
        }
        let add = if op == O::UDotAccSat {
            AluOp::UaddSat
        } else {
            AluOp::IaddSat
        };
        Ok(FVal::V(self.alu(add, rt, &[dot, acc])?))
    }

    /// Byte `k` of a packed 32-bit operand, sign- or zero-extended, in `n` bits.
    fn packed_byte(&mut self, v: Value, k: u64, signed: bool, n: u8) -> Res<Value> {
        let off = self.konst(Type::I32, 8 * k)?;
        let eight = self.konst(Type::I32, 8)?;
        let ex = if signed {
            AluOp::IbitfieldExtract
        } else {
            AluOp::UbitfieldExtract
        };
        let x = self.alu(ex, Type::I32, &[v, off, eight])?;
        self.widen(x, signed, Type::int(n))
    }

    /// `x` extended (or truncated) to the type `t`.
    fn widen(&mut self, x: Value, signed: bool, t: Type) -> Res<Value> {
        if self.ty(x).bits == t.bits {
            return Ok(x);
        }
        let conv = if signed { AluOp::I2i } else { AluOp::U2u };
        self.alu(conv, t, &[x])
    }

    /// `acc + x * y` (or `x * y` for the first term) in `t`.
    fn mul_add(&mut self, acc: Option<Value>, x: Value, y: Value, t: Type) -> Res<Value> {
        let p = self.alu(AluOp::Imul, t, &[x, y])?;
        match acc {
            Some(s) => self.alu(AluOp::Iadd, t, &[s, p]),
            None => Ok(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::translate_snippet;

    /// One case: the instruction, the operands' SPIR-V element type and component count (0:
    /// a packed 32-bit operand), the result's width and signedness.
    struct Case {
        op: &'static str,
        elem_bits: u32,
        comps: u32,
        res_bits: u32,
    }

    fn signed(op: &str) -> (bool, bool) {
        match op {
            "OpSDot" | "OpSDotAccSat" => (true, true),
            "OpUDot" | "OpUDotAccSat" => (false, false),
            _ => (true, false),
        }
    }

    fn sext(v: u64, bits: u32) -> i128 {
        i128::from(((v << (64 - bits)) as i64) >> (64 - bits))
    }

    /// The case's components of `v` as exact integers (four packed bytes or a vector), signed
    /// or not per operand.
    fn components(c: &Case, v: &[u64], signed: bool) -> Vec<i128> {
        let (eb, n) = if c.comps == 0 {
            (8, 4)
        } else {
            (c.elem_bits, c.comps)
        };
        (0..n)
            .map(|k| {
                let raw = if c.comps == 0 {
                    (v[0] >> (8 * k)) & 0xff
                } else {
                    v[k as usize]
                };
                if signed {
                    sext(raw, eb)
                } else {
                    i128::from(raw & (u64::MAX >> (64 - eb)))
                }
            })
            .collect()
    }

    /// The component products, each `None` where it overflows i128.
    fn checked_products(c: &Case, a: &[u64], b: &[u64]) -> Vec<Option<i128>> {
        let (sa, sb) = signed(c.op);
        let (x, y) = (components(c, a, sa), components(c, b, sb));
        x.iter().zip(&y).map(|(p, q)| p.checked_mul(*q)).collect()
    }

    /// The component products, wrapping in i128.
    fn products(c: &Case, a: &[u64], b: &[u64]) -> impl Iterator<Item = i128> {
        let (sa, sb) = signed(c.op);
        let (x, y) = (components(c, a, sa), components(c, b, sb));
        x.into_iter().zip(y).map(|(p, q)| p.wrapping_mul(q))
    }

    /// The specification's result, computed exactly in i128: the low N bits of the dot
    /// product, or its saturating sum with the accumulator.
    fn reference(c: &Case, a: &[u64], b: &[u64], acc: u64) -> u64 {
        // Wrapping in i128 keeps the low bits exact; AccSat cases are only compared where
        // the dot product fits the result (`fits`), so there it is exact too.
        let dot: i128 = products(c, a, b).fold(0i128, |s, p| s.wrapping_add(p));
        let rb = c.res_bits;
        let mask = u64::MAX >> (64 - rb);
        if !c.op.ends_with("AccSat") {
            return (dot as u64) & mask;
        }
        let (lo, hi, accv) = if c.op == "OpUDotAccSat" {
            (0i128, i128::from(mask), i128::from(acc & mask))
        } else {
            let hi = i128::from(mask >> 1);
            (-hi - 1, hi, sext(acc, rb))
        };
        ((dot + accv).clamp(lo, hi) as u64) & mask
    }

    /// Translates the case's shader and runs the pipeline on it.
    fn build(c: &Case) -> crate::ir::Shader {
        let (sa, _) = signed(c.op);
        let int = |bits: u32, s: bool| format!("OpTypeInt {bits} {}", u32::from(s));
        let mut caps = vec![];
        for bits in [c.elem_bits, c.res_bits] {
            match bits {
                8 => caps.push("OpCapability Int8\nOpCapability StorageBuffer8BitAccess"),
                16 => caps.push("OpCapability Int16\nOpCapability StorageBuffer16BitAccess"),
                64 => caps.push("OpCapability Int64"),
                _ => {}
            }
        }
        let caps = caps.join("\n");
        let input_cap = if c.comps == 0 {
            "OpCapability DotProductInput4x8BitPacked"
        } else {
            "OpCapability DotProductInputAll"
        };
        let (elem, opnd) = if c.comps == 0 {
            ("%te = OpTypeInt 32 0".to_string(), "%te".to_string())
        } else {
            (
                format!(
                    "%te = {}\n%tv = OpTypeVector %te {}",
                    int(c.elem_bits, sa),
                    c.comps
                ),
                "%tv".to_string(),
            )
        };
        let rsigned = c.op != "OpUDot" && c.op != "OpUDotAccSat";
        let packed = if c.comps == 0 {
            " PackedVectorFormat4x8Bit"
        } else {
            ""
        };
        let acc_opnd = if c.op.ends_with("AccSat") {
            " %acc"
        } else {
            ""
        };
        let snippet = format!(
            "OpCapability DotProduct
            {input_cap}
            {caps}
            OpExtension \"SPV_KHR_integer_dot_product\"
            OpExtension \"SPV_KHR_storage_buffer_storage_class\"
            OpDecorate %blk Block
            OpMemberDecorate %blk 0 Offset 0
            OpMemberDecorate %blk 1 Offset 32
            OpMemberDecorate %blk 2 Offset 64
            OpMemberDecorate %blk 3 Offset 72
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 0
            {elem}
            %tr = {rt}
            %blk = OpTypeStruct {opnd} {opnd} %tr %tr
            %pblk = OpTypePointer StorageBuffer %blk
            %pop = OpTypePointer StorageBuffer {opnd}
            %pr = OpTypePointer StorageBuffer %tr
            %buf = OpVariable %pblk StorageBuffer
            %c0 = OpConstant %i32 0
            %c1 = OpConstant %i32 1
            %c2 = OpConstant %i32 2
            %c3 = OpConstant %i32 3
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %pa = OpAccessChain %pop %buf %c0
            %pb = OpAccessChain %pop %buf %c1
            %pacc = OpAccessChain %pr %buf %c2
            %pout = OpAccessChain %pr %buf %c3
            %a = OpLoad {opnd} %pa
            %b = OpLoad {opnd} %pb
            %acc = OpLoad %tr %pacc
            %r = {op} %tr %a %b{acc_opnd}{packed}
            OpStore %pout %r
            OpReturn
            OpFunctionEnd",
            rt = int(c.res_bits, rsigned),
            op = c.op,
        );
        let ir = translate_snippet(c.op, &snippet, &[])
            .expect("spirv-as installed")
            .unwrap_or_else(|e| panic!("{e}\n{snippet}"));
        let mut s = crate::parse::parse_shader(&ir).unwrap();
        crate::pipeline::run_pipeline(&mut s, &Default::default()).unwrap();
        s
    }

    /// Runs the interpreter on `a`, `b`, `acc` (stored in a buffer so nothing is folded) and
    /// returns the stored result.
    fn run(s: &crate::ir::Shader, c: &Case, a: &[u64], b: &[u64], acc: u64) -> u64 {
        let mut mem = crate::interp::Memory::default();
        let mut buf = vec![0u8; 80];
        let eb = if c.comps == 0 {
            4
        } else {
            (c.elem_bits / 8) as usize
        };
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            buf[k * eb..(k + 1) * eb].copy_from_slice(&x.to_le_bytes()[..eb]);
            buf[32 + k * eb..32 + (k + 1) * eb].copy_from_slice(&y.to_le_bytes()[..eb]);
        }
        let rb = (c.res_bits / 8) as usize;
        buf[64..64 + rb].copy_from_slice(&acc.to_le_bytes()[..rb]);
        mem.ssbo.insert(0, buf);
        crate::interp::run(s, [1, 1, 1], 1, &mut mem).unwrap();
        let mut out = [0u8; 8];
        out[..rb].copy_from_slice(&mem.ssbo[&0][72..72 + rb]);
        u64::from_le_bytes(out)
    }

    /// Every instruction on packed bytes and on vectors of each width, with operands at the
    /// ends of their ranges and accumulators that do and do not saturate (fixed inputs; a
    /// failure names the case and the operands).
    #[test]
    fn integer_dot_products_match_the_exact_result() {
        let ops = [
            "OpSDot",
            "OpUDot",
            "OpSUDot",
            "OpSDotAccSat",
            "OpUDotAccSat",
            "OpSUDotAccSat",
        ];
        let shapes = [
            (8, 0, 32),
            (8, 4, 32),
            (8, 4, 16),
            (16, 2, 32),
            (32, 3, 32),
            (32, 2, 64),
            (64, 2, 64),
        ];
        let mut compared = 0;
        for op in ops {
            for &(elem_bits, comps, res_bits) in &shapes {
                let c = Case {
                    op,
                    elem_bits,
                    comps,
                    res_bits,
                };
                let shader = build(&c);
                let n = if comps == 0 { 1 } else { comps as usize };
                let em = u64::MAX >> (64 - elem_bits.max(if comps == 0 { 32 } else { 0 }));
                let rm = u64::MAX >> (64 - res_bits);
                let pos_max = rm >> 1;
                let inputs: Vec<(Vec<u64>, Vec<u64>)> = vec![
                    (vec![em; n], vec![em; n]),
                    (vec![0x8080_8080 & em; n], vec![0x7f7f_7f7f & em; n]),
                    (vec![em >> 1; n], vec![2; n]),
                    (
                        (0..n as u64)
                            .map(|k| (0x0102_8304 * (k + 1)) & em)
                            .collect(),
                        vec![(0xfe05_ff80) & em; n],
                    ),
                    (vec![3; n], vec![em; n]),
                ];
                let accs = [0, 1, pos_max, pos_max + 1, rm, rm - 5, pos_max - 100];
                for (a, b) in &inputs {
                    for &acc in &accs {
                        let want = reference(&c, a, b, acc);
                        // Only the forms whose intermediate dot product fits the result are
                        // defined for AccSat; the reference's exact sum is compared anyway
                        // when it does.
                        if op.ends_with("AccSat") && !fits(&c, a, b) {
                            continue;
                        }
                        let got = run(&shader, &c, a, b, acc);
                        compared += 1;
                        assert_eq!(
                            got, want,
                            "{op} {elem_bits}-bit x{comps} -> {res_bits}: a={a:x?} b={b:x?} acc={acc:#x}"
                        );
                        if !op.ends_with("AccSat") {
                            // The accumulator is not an operand.
                            break;
                        }
                    }
                }
            }
        }
        // Most AccSat cases are defined; a broken `fits` must not skip them all.
        assert!(compared > 400, "only {compared} cases compared");
    }

    /// Whether the exact dot product is representable in the result type (otherwise the
    /// AccSat forms are undefined).
    fn fits(c: &Case, a: &[u64], b: &[u64]) -> bool {
        let mut sum = 0i128;
        let rb = c.res_bits;
        let (lo, hi) = if c.op == "OpUDotAccSat" {
            (0, i128::from(u64::MAX >> (64 - rb)))
        } else {
            (-(1i128 << (rb - 1)), (1i128 << (rb - 1)) - 1)
        };
        for p in checked_products(c, a, b) {
            let Some(p) = p else {
                return false;
            };
            sum += p;
            if p < lo || p > hi || sum < lo || sum > hi {
                return false;
            }
        }
        true
    }
}
