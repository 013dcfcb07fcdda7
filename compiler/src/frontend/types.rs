//! SPIR-V types: their declarations, their IR types, and the natural (std430-like) layout
//! of storage without explicit layout.

use super::{invalid, op_id, op_lit, rid, unsupported, Fe, FrontendError, Res};
use crate::ir::Type;
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::{BuiltIn, Decoration, StorageClass};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum SType {
    Void,
    Bool,
    Int(u8),
    Float(u8),
    Vector(u32, u8),
    Matrix(u32, u8),
    Array(u32, u32),
    RuntimeArray(u32),
    Struct(Vec<u32>),
    Pointer(StorageClass, u32),
    Function,
    Image(ImageType),
    /// `OpTypeSampler`.
    Sampler,
    /// `OpTypeSampledImage` of the image type with this id.
    SampledImage(u32),
}

/// An `OpTypeImage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ImageType {
    /// The sampled type (a 32-bit scalar type id).
    pub(super) sampled_ty: u32,
    pub(super) dim: spirv::Dim,
    pub(super) arrayed: bool,
    pub(super) multisampled: bool,
    /// 1 = used with a sampler, 2 = storage image, 0 = known at run time only.
    pub(super) sampled: u32,
    pub(super) format: spirv::ImageFormat,
}

impl ImageType {
    /// Integer coordinates a typed message takes for this image (layer last).
    pub(super) fn coords(&self) -> u8 {
        let base = match self.dim {
            spirv::Dim::Dim1D | spirv::Dim::DimBuffer => 1,
            spirv::Dim::Dim3D => 3,
            _ => 2,
        };
        base + self.arrayed as u8
    }

    /// Float coordinates of a sample or gather: a cube's direction has three, and the array
    /// layer comes after them.
    pub(super) fn sample_coords(&self) -> u8 {
        let base = match self.dim {
            spirv::Dim::Dim1D | spirv::Dim::DimBuffer => 1,
            spirv::Dim::Dim3D | spirv::Dim::DimCube => 3,
            _ => 2,
        };
        base + self.arrayed as u8
    }
}

/// The pointee of a forward pointer whose OpTypePointer has not been seen yet.
const FORWARD: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MemberDeco {
    pub(super) offset: Option<u32>,
    pub(super) matrix_stride: Option<u32>,
    pub(super) row_major: bool,
    pub(super) builtin: Option<BuiltIn>,
    pub(super) non_writable: bool,
}

impl Fe<'_> {
    pub(super) fn check_type(&self, t: u32) -> Res<()> {
        match self.decl.types.get(&t) {
            // A physical pointer is data: a 64-bit address.
            Some(SType::Pointer(StorageClass::PhysicalStorageBuffer, _)) => Ok(()),
            Some(SType::Void | SType::Function | SType::Pointer(..)) | None => {
                invalid(format!("%{t} is not a data type"))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn add_type(&mut self, i: &dr::Instruction, t: SType) -> Res<()> {
        let id = rid(i)?;
        if self.decl.types.insert(id, t).is_some() {
            return invalid(format!("type %{id} defined twice"));
        }
        Ok(())
    }

    pub(super) fn scalar_ir_type(&self, t: u32) -> Res<Type> {
        Ok(match self.decl.types.get(&t) {
            Some(SType::Bool) => Type::B1,
            Some(SType::Int(b)) => Type::int(*b),
            Some(SType::Float(b)) => Type::float(*b),
            // A `PhysicalStorageBuffer` pointer is held as its 64-bit address.
            Some(SType::Pointer(StorageClass::PhysicalStorageBuffer, _)) => Type::int(64),
            _ => return invalid(format!("%{t} is not a scalar type")),
        })
    }

    /// IR type of a scalar or vector SPIR-V type.
    pub(super) fn ir_type(&self, t: u32) -> Res<Type> {
        match self.decl.types.get(&t) {
            Some(SType::Vector(e, n)) => Ok(self.scalar_ir_type(*e)?.vec(*n)),
            _ => self.scalar_ir_type(t),
        }
    }

    pub(super) fn stype(&self, t: u32) -> Res<SType> {
        self.decl
            .types
            .get(&t)
            .cloned()
            .ok_or_else(|| FrontendError::Invalid(format!("%{t} is not a type")))
    }

    /// Natural (std430-like) size and alignment of a type for storage without explicit layout.
    pub(super) fn natural(&self, t: u32, depth: u32) -> Res<(u32, u32)> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        Ok(match self.stype(t)? {
            SType::Bool => (4, 4),
            SType::Int(b) | SType::Float(b) => (u32::from(b) / 8, u32::from(b) / 8),
            SType::Pointer(StorageClass::PhysicalStorageBuffer, _) => (8, 8),
            SType::Vector(e, n) => {
                let (s, _) = self.natural(e, depth + 1)?;
                let a = s * if n == 3 { 4 } else { u32::from(n) };
                (s * u32::from(n), a)
            }
            SType::Matrix(c, n) => {
                let (_, a) = self.natural(c, depth + 1)?;
                (a * u32::from(n), a)
            }
            SType::Array(e, n) => {
                let (s, a) = self.natural(e, depth + 1)?;
                let stride = self.array_stride(t).unwrap_or(s.next_multiple_of(a));
                (
                    stride
                        .checked_mul(n)
                        .ok_or_else(|| FrontendError::Invalid("type too large".into()))?,
                    a,
                )
            }
            SType::RuntimeArray(e) => {
                let (_, a) = self.natural(e, depth + 1)?;
                (0, a)
            }
            SType::Struct(m) => {
                let mut off = 0u32;
                let mut al = 1;
                for (k, mt) in m.iter().enumerate() {
                    let (s, a) = self.natural(*mt, depth + 1)?;
                    al = al.max(a);
                    off = match self
                        .decl
                        .member_decos
                        .get(&(t, k as u32))
                        .and_then(|d| d.offset)
                    {
                        Some(o) => o,
                        None => off.next_multiple_of(a),
                    };
                    off = off
                        .checked_add(s)
                        .ok_or_else(|| FrontendError::Invalid("type too large".into()))?;
                }
                (off.next_multiple_of(al), al)
            }
            _ => return invalid(format!("%{t} has no memory layout")),
        })
    }

    pub(super) fn array_stride(&self, t: u32) -> Option<u32> {
        self.deco(t, Decoration::ArrayStride)
            .and_then(|a| a.first().copied())
    }

    pub(super) fn member_offset(&self, st: u32, k: u32) -> Res<u32> {
        if let Some(o) = self.decl.member_decos.get(&(st, k)).and_then(|d| d.offset) {
            return Ok(o);
        }
        let SType::Struct(m) = self.stype(st)? else {
            return invalid("not a struct");
        };
        let mut off = 0u32;
        for (i, mt) in m.iter().enumerate() {
            let (s, a) = self.natural(*mt, 0)?;
            off = self
                .decl
                .member_decos
                .get(&(st, i as u32))
                .and_then(|d| d.offset)
                .unwrap_or(off.next_multiple_of(a));
            if i as u32 == k {
                return Ok(off);
            }
            off += s;
        }
        invalid("member index out of range")
    }

    /// Records a type declaration (OpType*).
    pub(super) fn declare_type(&mut self, i: &dr::Instruction) -> Res<()> {
        use spirv::Op as O;
        let op = i.class.opcode;
        match op {
            O::TypeVoid => self.add_type(i, SType::Void)?,
            O::TypeBool => self.add_type(i, SType::Bool)?,
            O::TypeInt => {
                let w = op_lit(i, 0)?;
                match w {
                    8 | 16 | 32 | 64 => self.add_type(i, SType::Int(w as u8))?,
                    _ => return unsupported(format!("{w}-bit integers")),
                }
            }
            O::TypeFloat => {
                let w = op_lit(i, 0)?;
                match w {
                    16 | 32 | 64 => self.add_type(i, SType::Float(w as u8))?,
                    _ => return unsupported(format!("{w}-bit floats")),
                }
            }
            O::TypeVector => {
                let (e, n) = (op_id(i, 0)?, op_lit(i, 1)?);
                if !(2..=4).contains(&n) {
                    return unsupported(format!("vectors of {n} components"));
                }
                match self.decl.types.get(&e) {
                    Some(SType::Bool | SType::Int(_) | SType::Float(_)) => {}
                    _ => return invalid("vector of non-scalar"),
                }
                self.add_type(i, SType::Vector(e, n as u8))?
            }
            O::TypeMatrix => {
                let (c, n) = (op_id(i, 0)?, op_lit(i, 1)?);
                if !(2..=4).contains(&n)
                    || !matches!(self.decl.types.get(&c), Some(SType::Vector(..)))
                {
                    return invalid("bad matrix type");
                }
                self.add_type(i, SType::Matrix(c, n as u8))?
            }
            O::TypeArray => {
                let e = op_id(i, 0)?;
                self.check_type(e)?;
                let len = self.const_u32(op_id(i, 1)?)?;
                if len == 0 || len > 1 << 24 {
                    return invalid(format!("array length {len}"));
                }
                self.add_type(i, SType::Array(e, len))?
            }
            O::TypeRuntimeArray => {
                let e = op_id(i, 0)?;
                self.check_type(e)?;
                self.add_type(i, SType::RuntimeArray(e))?
            }
            O::TypeStruct => {
                let mut m = Vec::new();
                for k in 0..i.operands.len() {
                    let t = op_id(i, k)?;
                    self.check_type(t)?;
                    m.push(t);
                }
                self.add_type(i, SType::Struct(m))?
            }
            O::TypePointer => {
                let Some(Operand::StorageClass(sc)) = i.operands.first() else {
                    return invalid("pointer without storage class");
                };
                let id = rid(i)?;
                // The declaration of a forward pointer replaces its placeholder.
                if let Some(SType::Pointer(fsc, FORWARD)) = self.decl.types.get(&id) {
                    if fsc != sc {
                        return invalid("forward pointer with another storage class");
                    }
                    self.decl.types.remove(&id);
                }
                self.add_type(i, SType::Pointer(*sc, op_id(i, 1)?))?
            }
            O::TypeForwardPointer => {
                // `OpTypeForwardPointer %ptr StorageClass`: a struct may name the pointer type
                // before its OpTypePointer (a linked node of PhysicalStorageBuffer memory).
                let t = op_id(i, 0)?;
                let Some(Operand::StorageClass(sc)) = i.operands.get(1) else {
                    return invalid("forward pointer without storage class");
                };
                if *sc != StorageClass::PhysicalStorageBuffer {
                    return unsupported(format!("forward pointers to {sc:?}"));
                }
                self.decl
                    .types
                    .entry(t)
                    .or_insert(SType::Pointer(*sc, FORWARD));
            }
            O::TypeFunction => self.add_type(i, SType::Function)?,
            O::TypeImage => {
                let lit = |k: usize| -> Res<u32> {
                    match i.operands.get(k) {
                        Some(Operand::LiteralBit32(v)) => Ok(*v),
                        _ => invalid("OpTypeImage operand"),
                    }
                };
                let dim = match i.operands.get(1) {
                    Some(Operand::Dim(d)) => *d,
                    _ => return invalid("OpTypeImage without Dim"),
                };
                let format = match i.operands.get(6) {
                    Some(Operand::ImageFormat(f)) => *f,
                    _ => return invalid("OpTypeImage without Image Format"),
                };
                let t = ImageType {
                    sampled_ty: op_id(i, 0)?,
                    dim,
                    arrayed: lit(3)? != 0,
                    multisampled: lit(4)? != 0,
                    sampled: lit(5)?,
                    format,
                };
                self.add_type(i, SType::Image(t))?
            }
            O::TypeSampler => self.add_type(i, SType::Sampler)?,
            O::TypeSampledImage => self.add_type(i, SType::SampledImage(op_id(i, 0)?))?,
            _ => return invalid(format!("{op:?} is not a type declaration")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_err, check_ir};

    /// A Workgroup struct without explicit layout takes the natural layout: the vec3 is
    /// aligned to 16 bytes and the struct is padded to its alignment.
    #[test]
    fn workgroup_struct_takes_natural_layout() {
        check_ir(
            "workgroup_struct_takes_natural_layout",
            "
            %S = OpTypeStruct %f32 %v3u32 %u32
            %ptr_s = OpTypePointer Workgroup %S
            %ptr_u32 = OpTypePointer Workgroup %u32
            %shared = OpVariable %ptr_s Workgroup
            %c2 = OpConstant %i32 2
            %c7 = OpConstant %u32 7
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %p = OpAccessChain %ptr_u32 %shared %c2
            OpStore %p %c7
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 32 local 0 push 0
            fn main {
                loop {
                    %0:i32 = const 7
                    %1:i32 = const 28
                    store shared %1, %0 align 4
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn wide_integers_are_rejected() {
        check_err(
            "wide_integers_are_rejected",
            "
            %u128 = OpTypeInt 128 0
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            OpReturn
            OpFunctionEnd
            ",
            "unsupported: 128-bit integers",
        );
    }
}
