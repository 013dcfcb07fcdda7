//! Buffer memory layout, as Amber's `docs/memory_layout.md` gives it: where each component of
//! an element lives and how far apart elements are, under STD140 or STD430.
//!
//! - A vector of 3 takes the room of 4 (in both layouts).
//! - A matrix is its columns; each column is a vector. STD140 rounds the column stride up
//!   to 16 bytes, STD430 does not.
//! - An array (`[]`) element is padded to 16 bytes under STD140; scalars and vectors that are
//!   not arrays are packed as they are.

use super::ast::{BufferInit, DataType, Layout, Scalar, Value};

/// Where the components of one element live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementFormat {
    pub scalar: Scalar,
    /// Byte offset of each component inside the element, in DATA order (column by column).
    pub offsets: Vec<u32>,
    /// Bytes per element, padding included (the element stride).
    pub size: u32,
}

fn round_up(v: u32, a: u32) -> u32 {
    v.div_ceil(a) * a
}

impl ElementFormat {
    pub fn new(ty: &DataType, layout: Layout) -> ElementFormat {
        let s = ty.scalar.size();
        let vec_size = if ty.rows == 3 { 4 * s } else { ty.rows * s };
        let col_stride = if ty.is_matrix() && layout == Layout::Std140 {
            round_up(vec_size, 16)
        } else {
            vec_size
        };
        let mut offsets = Vec::new();
        for c in 0..ty.cols {
            for r in 0..ty.rows {
                offsets.push(c * col_stride + r * s);
            }
        }
        let mut size = col_stride * ty.cols;
        if ty.array && layout == Layout::Std140 {
            size = round_up(size, 16);
        }
        ElementFormat {
            scalar: ty.scalar,
            offsets,
            size,
        }
    }

    /// Where value number `i` of a list starting at element 0 lives.
    pub fn value_offset(&self, i: usize) -> u64 {
        let n = self.offsets.len();
        (i / n) as u64 * self.size as u64 + self.offsets[i % n] as u64
    }
}

/// A decimal as Amber stores it in a float16 buffer element (Amber's `FloatToHexFloat16`,
/// src/float16_helper.cc): the value is first a float32 (rounded to nearest), then its
/// exponent is rebased by 127 - 15 = 112 and its 23-bit mantissa is cut to 10 bits by a shift:
/// truncation, not rounding. A float32 denormal becomes a signed zero. For a value outside the
/// half range Amber asserts in debug builds; its release arithmetic (the rebased exponent taken
/// modulo 32) is what is reproduced here.
pub fn amber_f16_bits(v: f64) -> u16 {
    let bits = (v as f32).to_bits();
    let sign = (bits >> 31) as u16;
    let exp_bits = (bits >> 23) & 0xff;
    if exp_bits == 0 {
        return sign << 15;
    }
    let exponent = (exp_bits.wrapping_sub(112) & 0x1f) as u16;
    let mantissa = ((bits & 0x7f_ffff) >> 13) as u16;
    (sign << 15) | (exponent << 10) | mantissa
}

/// A float16 element as Amber reads it for a probe (Amber's `HexFloat16ToFloat`): half
/// denormals flush to a signed zero, and exponent 31 is rebased like any other (Amber has no
/// half infinity or NaN: 0x7c00 reads as 65536).
pub fn amber_f16_value(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp_bits = u32::from(h >> 10) & 0x1f;
    if exp_bits == 0 {
        return f32::from_bits(sign);
    }
    let mantissa = u32::from(h & 0x3ff) << 13;
    f32::from_bits(sign | ((exp_bits + 112) << 23) | mantissa)
}

/// Stores `v` into `out` (little endian) as a `s`; integers wrap to the type.
pub fn store(out: &mut [u8], s: Scalar, v: Value) {
    let n = s.size() as usize;
    match s {
        Scalar::F16 => out[..2].copy_from_slice(&amber_f16_bits(v.as_f64()).to_le_bytes()),
        Scalar::F32 => out[..4].copy_from_slice(&(v.as_f64() as f32).to_le_bytes()),
        Scalar::F64 => out[..8].copy_from_slice(&v.as_f64().to_le_bytes()),
        _ => out[..n].copy_from_slice(&v.as_bits().to_le_bytes()[..n]),
    }
}

/// A component read back from memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loaded {
    Signed(i64),
    Unsigned(u64),
    Float(f64),
}

impl std::fmt::Display for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Loaded::Signed(v) => write!(f, "{v}"),
            Loaded::Unsigned(v) => write!(f, "{v}"),
            Loaded::Float(v) => write!(f, "{v:?}"),
        }
    }
}

pub fn load(bytes: &[u8], s: Scalar) -> Loaded {
    let mut b = [0u8; 8];
    let n = s.size() as usize;
    b[..n].copy_from_slice(&bytes[..n]);
    let u = u64::from_le_bytes(b);
    match s {
        Scalar::I8 => Loaded::Signed(u as u8 as i8 as i64),
        Scalar::I16 => Loaded::Signed(u as u16 as i16 as i64),
        Scalar::I32 => Loaded::Signed(u as u32 as i32 as i64),
        Scalar::I64 => Loaded::Signed(u as i64),
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => Loaded::Unsigned(u),
        Scalar::F16 => Loaded::Float(f64::from(amber_f16_value(u as u16))),
        Scalar::F32 => Loaded::Float(f32::from_bits(u as u32) as f64),
        Scalar::F64 => Loaded::Float(f64::from_bits(u)),
    }
}

/// Number of elements a buffer initializer makes.
pub fn element_count(ty: &DataType, init: &BufferInit) -> u64 {
    match init {
        BufferInit::Fill { size, .. } | BufferInit::Series { size, .. } => *size,
        BufferInit::Data(v) => (v.len() as u64).div_ceil(ty.components() as u64),
    }
}

/// The initial bytes of a buffer. Padding is zero; a DATA list that ends inside an element
/// leaves the rest of that element zero.
pub fn initial_bytes(ty: &DataType, layout: Layout, init: &BufferInit) -> Vec<u8> {
    let fmt = ElementFormat::new(ty, layout);
    let count = element_count(ty, init);
    let mut out = vec![0u8; (count * fmt.size as u64) as usize];
    let n_values = count as usize * fmt.offsets.len();
    let mut put = |i: usize, v: Value| {
        let o = fmt.value_offset(i) as usize;
        store(&mut out[o..], fmt.scalar, v);
    };
    match init {
        BufferInit::Fill { value, .. } => (0..n_values).for_each(|i| put(i, *value)),
        BufferInit::Series { from, inc, .. } => {
            for i in 0..n_values {
                let v = if ty.scalar.is_float() {
                    Value::Float(from.as_f64() + inc.as_f64() * i as f64)
                } else {
                    Value::Int(
                        (from.as_bits() as i128)
                            .wrapping_add((inc.as_bits() as i128).wrapping_mul(i as i128)),
                    )
                };
                put(i, v);
            }
        }
        BufferInit::Data(vals) => vals.iter().enumerate().for_each(|(i, v)| put(i, *v)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: Scalar, rows: u32, cols: u32, array: bool) -> DataType {
        DataType {
            scalar: s,
            rows,
            cols,
            array,
        }
    }

    fn f(t: DataType, l: Layout) -> (Vec<u32>, u32) {
        let e = ElementFormat::new(&t, l);
        (e.offsets, e.size)
    }

    use Layout::{Std140, Std430};
    use Scalar::*;

    /// Values whose half rounding and truncation differ, with Amber's bits (truncated).
    #[test]
    fn float16_data_truncates_as_amber_does() {
        for (v, bits) in [
            // 0.1 = 0x3dcccccd as float32: mantissa 0x4ccccd >> 13 = 0x266 (the cut bits are
            // below half, so rounding agrees).
            (0.1, 0x2e66u16),
            // 1/3: 0x3eaaaaab -> 0x3555 (rounding agrees).
            (1.0 / 3.0, 0x3555),
            // 0.7 = 0x3f333333: 0x333333 >> 13 = 0x199 -> 0x3999 (rounding: 0x399a).
            (0.7, 0x3999),
            (-2.0, 0xc000),
            (0.0, 0x0000),
            (-0.0, 0x8000),
            // A float32 denormal flushes to a signed zero.
            (-1e-40, 0x8000),
            // Half normal limits.
            (65504.0, 0x7bff),
            (6.103_515_625e-5, 0x0400),
        ] {
            assert_eq!(amber_f16_bits(v), bits, "{v}: {:#06x}", amber_f16_bits(v));
        }
        // Reading back: half denormals flush, exponent 31 is not an infinity.
        assert_eq!(amber_f16_value(0x0001), 0.0);
        assert_eq!(amber_f16_value(0x8001).to_bits(), (-0.0f32).to_bits());
        assert_eq!(amber_f16_value(0x7c00), 65536.0);
        assert_eq!(amber_f16_value(0x3999), 0.699_707_03);
    }

    #[test]
    fn scalars_are_packed_in_both_layouts() {
        for (s, size) in [
            (I8, 1),
            (U16, 2),
            (F16, 2),
            (I32, 4),
            (F32, 4),
            (U64, 8),
            (F64, 8),
        ] {
            assert_eq!(f(DataType::scalar(s), Std430), (vec![0], size));
            assert_eq!(f(DataType::scalar(s), Std140), (vec![0], size));
        }
    }

    #[test]
    fn vectors() {
        assert_eq!(f(ty(F32, 2, 1, false), Std140), (vec![0, 4], 8));
        assert_eq!(f(ty(F32, 3, 1, false), Std430), (vec![0, 4, 8], 16));
        assert_eq!(f(ty(I8, 3, 1, false), Std430), (vec![0, 1, 2], 4));
        assert_eq!(f(ty(I16, 3, 1, false), Std140), (vec![0, 2, 4], 8));
        assert_eq!(f(ty(F64, 3, 1, false), Std430), (vec![0, 8, 16], 32));
        assert_eq!(f(ty(I8, 2, 1, false), Std140), (vec![0, 1], 2));
    }

    #[test]
    fn arrays() {
        assert_eq!(f(ty(I8, 1, 1, true), Std140), (vec![0], 16));
        assert_eq!(f(ty(I64, 1, 1, true), Std140), (vec![0], 16));
        assert_eq!(f(ty(I8, 1, 1, true), Std430), (vec![0], 1));
        assert_eq!(f(ty(F32, 2, 1, true), Std140), (vec![0, 4], 16));
        assert_eq!(f(ty(F32, 2, 1, true), Std430), (vec![0, 4], 8));
        assert_eq!(f(ty(I16, 3, 1, true), Std430), (vec![0, 2, 4], 8));
        assert_eq!(f(ty(I32, 4, 1, true), Std140), (vec![0, 4, 8, 12], 16));
    }

    #[test]
    fn matrices() {
        // Columns of a std140 matrix are 16 bytes apart.
        assert_eq!(f(ty(F32, 2, 2, false), Std140), (vec![0, 4, 16, 20], 32));
        assert_eq!(f(ty(F32, 2, 2, false), Std430), (vec![0, 4, 8, 12], 16));
        assert_eq!(f(ty(I8, 2, 2, false), Std140), (vec![0, 1, 16, 17], 32));
        assert_eq!(f(ty(F16, 2, 2, false), Std430), (vec![0, 2, 4, 6], 8));
        assert_eq!(
            f(ty(F32, 3, 2, false), Std430),
            (vec![0, 4, 8, 16, 20, 24], 32)
        );
        assert_eq!(
            f(ty(F32, 2, 3, true), Std430),
            (vec![0, 4, 8, 12, 16, 20], 24)
        );
        assert_eq!(f(ty(F32, 3, 4, true), Std140).1, 64);
        assert_eq!(f(ty(F64, 4, 4, false), Std430).1, 128);
        assert_eq!(f(ty(F64, 2, 2, false), Std140), (vec![0, 8, 16, 24], 32));
    }

    #[test]
    fn values_wrap_to_the_type() {
        let mut b = [0u8; 8];
        store(&mut b, U8, Value::Int(-1));
        assert_eq!(b[0], 0xff);
        store(&mut b, U8, Value::Int(256 + 7));
        assert_eq!(b[0], 7);
        store(&mut b, I16, Value::Int(0x12345));
        assert_eq!(load(&b, I16), Loaded::Signed(0x2345));
        store(&mut b, U64, Value::Int(u64::MAX as i128));
        assert_eq!(load(&b, U64), Loaded::Unsigned(u64::MAX));
        store(&mut b, I64, Value::Int(-2));
        assert_eq!(load(&b, I64), Loaded::Signed(-2));
        store(&mut b, F16, Value::Float(1.5));
        assert_eq!(u16::from_le_bytes([b[0], b[1]]), 0x3e00);
        store(&mut b, F16, Value::Float(-65504.0));
        assert_eq!(load(&b, F16), Loaded::Float(-65504.0));
        store(&mut b, F32, Value::Float(f64::NAN));
        assert!(matches!(load(&b, F32), Loaded::Float(v) if v.is_nan()));
        store(&mut b, F64, Value::Int(3));
        assert_eq!(load(&b, F64), Loaded::Float(3.0));
    }

    #[test]
    fn initializers() {
        let t = ty(F32, 3, 1, false);
        let b = initial_bytes(
            &t,
            Std430,
            &BufferInit::Data(vec![
                Value::Float(1.0),
                Value::Float(2.0),
                Value::Float(3.0),
                Value::Float(4.0),
            ]),
        );
        assert_eq!(b.len(), 32);
        assert_eq!(&b[12..16], &[0; 4]);
        assert_eq!(load(&b[16..], F32), Loaded::Float(4.0));
        let t = ty(I32, 1, 1, true);
        let b = initial_bytes(
            &t,
            Std140,
            &BufferInit::Series {
                size: 3,
                from: Value::Int(5),
                inc: Value::Int(-2),
            },
        );
        assert_eq!(b.len(), 48);
        assert_eq!(load(&b[32..], I32), Loaded::Signed(1));
        let t = ty(U8, 1, 1, false);
        let b = initial_bytes(
            &t,
            Std430,
            &BufferInit::Fill {
                size: 5,
                value: Value::Int(0x1ff),
            },
        );
        assert_eq!(b, vec![0xff; 5]);
        let t = ty(F64, 2, 2, false);
        let b = initial_bytes(
            &t,
            Std140,
            &BufferInit::Series {
                size: 1,
                from: Value::Float(0.5),
                inc: Value::Float(0.25),
            },
        );
        assert_eq!(load(&b[16..], F64), Loaded::Float(1.0));
        assert_eq!(load(&b[24..], F64), Loaded::Float(1.25));
    }
}
