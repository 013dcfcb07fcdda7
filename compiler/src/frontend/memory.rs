//! Memory and access chains: function variables (trees of IR variables or local memory),
//! loads and stores through buffers, push constants, shared and local memory with their
//! explicit layouts, built-in inputs, and access chains.

use super::constants::Const;
use super::types::SType;
use super::values::{FVal, VarTree};
use super::{invalid, op_id, pow2_div, rty, unsupported, Fe, FrontendError, Res};
use crate::ir::{AluOp, BufIndex, ImgRef, Kind, Op, Space, SysVal, Type, Value, Var};
use rspirv::spirv;
use spirv::{BuiltIn, Decoration, StorageClass};

/// A matrix stride and majorness carried by a pointer into a matrix (or array of them).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MatLayout {
    pub(super) stride: Option<u32>,
    pub(super) row_major: bool,
}

#[derive(Clone, Debug)]
pub(super) enum Ptr {
    Mem {
        space: Space,
        dyn_off: Option<Value>,
        konst: u32,
        align: u32,
        ty: u32,
        mat: MatLayout,
        /// Component stride of a vector that is a column of a row-major matrix.
        comp_stride: Option<u32>,
    },
    Var {
        tree: VarTree,
        ty: u32,
    },
    /// One component of a vector held in an IR variable.
    VarComp {
        var: Var,
        comp: Result<u8, Value>,
    },
    Builtin {
        b: BuiltIn,
        comp: Option<Result<u8, Value>>,
        ty: u32,
    },
    /// A storage image (or texel buffer) variable, or an image loaded from one: binding-table
    /// entries `bti .. bti + count` of image type `ty`; `index`: one element of the array
    /// whose first entry is `bti`, chosen at run time (then `count` is 1).
    Image {
        bti: u32,
        count: u32,
        ty: u32,
        index: Option<BufIndex>,
    },
    /// `OpSampledImage`: the sampled image at `image` with the sampler at `sampler`
    /// (binding-table indices; the sampler's is also its sampler-table index), of image type
    /// `ty`; either may be an array element chosen at run time.
    Sampled {
        image: u32,
        sampler: u32,
        ty: u32,
        image_index: Option<BufIndex>,
        sampler_index: Option<BufIndex>,
    },
    /// `OpImageTexelPointer`: one texel of the image `img` (for atomics).
    Texel {
        img: ImgRef,
        coord: Value,
    },
}

impl Fe<'_> {
    pub(super) fn alloc_var(&mut self, id: u32, pointee: u32) -> Res<Ptr> {
        if self.code.dyn_roots.contains(&id) {
            let (s, a) = self.natural(pointee, 0)?;
            let off = self.iface.local_size_mem.next_multiple_of(a.max(4));
            self.iface.local_size_mem =
                off.checked_add(s)
                    .filter(|x| *x <= 1 << 20)
                    .ok_or_else(|| {
                        FrontendError::Unsupported("function memory larger than 1 MiB".into())
                    })?;
            Ok(Ptr::Mem {
                space: Space::Local,
                dyn_off: None,
                konst: off,
                align: pow2_div(off).min(16),
                ty: pointee,
                mat: MatLayout::default(),
                comp_stride: None,
            })
        } else {
            Ok(Ptr::Var {
                tree: self.type_tree(pointee, 0)?,
                ty: pointee,
            })
        }
    }

    /// Stores the initializer, or zero (variables start zeroed so vars-to-SSA never reads an
    /// undefined value).
    pub(super) fn init_var(&mut self, p: &Ptr, pointee: u32, init: Option<u32>) -> Res<()> {
        let v = match init {
            Some(i) => self.get(i, u32::MAX)?,
            None => {
                if matches!(p, Ptr::Mem { .. }) {
                    return Ok(());
                }
                let c = self.null_const(pointee, 0)?;
                self.const_fval(pointee, &c, 0)?
            }
        };
        self.store_ptr(p, &v)
    }

    pub(super) fn offset_value(&mut self, dyn_off: Option<Value>, konst: u32) -> Res<Value> {
        match dyn_off {
            None => self.i32c(konst),
            Some(d) if konst == 0 => Ok(d),
            Some(d) => {
                let k = self.i32c(konst)?;
                self.alu(AluOp::Iadd, Type::I32, &[d, k])
            }
        }
    }

    pub(super) fn add_dyn(
        &mut self,
        dyn_off: Option<Value>,
        idx: Value,
        stride: u32,
    ) -> Res<Value> {
        let idx = self.as_i32(idx)?;
        let s = self.i32c(stride)?;
        let m = self.alu(AluOp::Imul, Type::I32, &[idx, s])?;
        match dyn_off {
            None => Ok(m),
            Some(d) => self.alu(AluOp::Iadd, Type::I32, &[d, m]),
        }
    }

    pub(super) fn as_i32(&mut self, v: Value) -> Res<Value> {
        let t = self.ty(v);
        if t.kind != Kind::Int || t.comps != 1 {
            return invalid("index is not a scalar integer");
        }
        if t.bits == 32 {
            Ok(v)
        } else {
            self.alu(AluOp::I2i, Type::I32, &[v])
        }
    }

    pub(super) fn load_ptr(&mut self, p: &Ptr) -> Res<FVal> {
        match p {
            // Loading an image variable yields the image itself (a descriptor).
            Ptr::Image { .. } | Ptr::Sampled { .. } => Ok(FVal::P(Box::new(p.clone()))),
            Ptr::Texel { .. } => invalid("OpLoad through an image texel pointer"),
            Ptr::Var { tree, .. } => self.load_tree(tree),
            Ptr::VarComp { var, comp, .. } => {
                let ty = self.f.vars[var.0 as usize];
                let v = self.emit(ty, Op::LoadVar(*var))?;
                match comp {
                    Ok(c) => Ok(FVal::V(self.extract(v, *c)?)),
                    Err(i) => Ok(FVal::V(self.dyn_extract(v, *i)?)),
                }
            }
            Ptr::Builtin { b, comp, .. } => {
                let v = self.builtin(*b)?;
                match comp {
                    None => Ok(v),
                    Some(Ok(c)) => Ok(FVal::V(self.extract(v.v()?, *c)?)),
                    Some(Err(i)) => {
                        let v = v.v()?;
                        Ok(FVal::V(self.dyn_extract(v, *i)?))
                    }
                }
            }
            Ptr::Mem {
                space,
                dyn_off,
                konst,
                align,
                ty,
                mat,
                comp_stride,
            } => self.load_mem(*space, *dyn_off, *konst, *align, *ty, *mat, *comp_stride, 0),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn load_mem(
        &mut self,
        space: Space,
        dyn_off: Option<Value>,
        konst: u32,
        align: u32,
        ty: u32,
        mat: MatLayout,
        comp_stride: Option<u32>,
        depth: u32,
    ) -> Res<FVal> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        let al = |k: u32| align.min(pow2_div(k));
        match self.stype(ty)? {
            SType::Bool => {
                let off = self.offset_value(dyn_off, konst)?;
                let v = self.emit(
                    Type::I32,
                    Op::Load {
                        space,
                        offset: off,
                        align: al(konst),
                    },
                )?;
                let z = self.i32c(0)?;
                Ok(FVal::V(self.alu(AluOp::Ine, Type::B1, &[v, z])?))
            }
            SType::Int(_)
            | SType::Float(_)
            | SType::Pointer(StorageClass::PhysicalStorageBuffer, _) => {
                let t = self.ir_type(ty)?;
                let off = self.offset_value(dyn_off, konst)?;
                Ok(FVal::V(self.emit(
                    t,
                    Op::Load {
                        space,
                        offset: off,
                        align: al(konst),
                    },
                )?))
            }
            SType::Vector(e, n) => {
                let et = self.scalar_ir_type(e)?;
                if et.is_bool() || comp_stride.is_some_and(|s| s != et.comp_bytes()) {
                    let stride = comp_stride.unwrap_or(4);
                    let mut c = Vec::new();
                    for k in 0..u32::from(n) {
                        c.push(
                            self.load_mem(
                                space,
                                dyn_off,
                                konst + k * stride,
                                align,
                                e,
                                mat,
                                None,
                                depth + 1,
                            )?
                            .v()?,
                        );
                    }
                    return Ok(FVal::V(self.emit(et.vec(n), Op::Vec(c))?));
                }
                let off = self.offset_value(dyn_off, konst)?;
                Ok(FVal::V(self.emit(
                    et.vec(n),
                    Op::Load {
                        space,
                        offset: off,
                        align: al(konst),
                    },
                )?))
            }
            SType::Matrix(c, n) => {
                let (cs, ca) = self.natural(c, depth + 1)?;
                let _ = cs;
                let stride = mat.stride.unwrap_or(ca);
                let SType::Vector(e, _) = self.stype(c)? else {
                    return invalid("matrix column");
                };
                let esz = self.scalar_ir_type(e)?.comp_bytes();
                let mut cols = Vec::new();
                for k in 0..u32::from(n) {
                    cols.push(if mat.row_major {
                        self.load_mem(
                            space,
                            dyn_off,
                            konst + k * esz,
                            align,
                            c,
                            MatLayout::default(),
                            Some(stride),
                            depth + 1,
                        )?
                    } else {
                        self.load_mem(
                            space,
                            dyn_off,
                            konst + k * stride,
                            align,
                            c,
                            MatLayout::default(),
                            None,
                            depth + 1,
                        )?
                    });
                }
                Ok(FVal::C(cols))
            }
            SType::Array(e, n) => {
                let stride = self.elem_stride(ty, e)?;
                if n > 4096 {
                    return unsupported("loading a whole array of more than 4096 elements");
                }
                let mut v = Vec::new();
                for k in 0..n {
                    v.push(self.load_mem(
                        space,
                        dyn_off,
                        konst + k * stride,
                        align,
                        e,
                        mat,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(FVal::C(v))
            }
            SType::Struct(m) => {
                let mut v = Vec::new();
                for (k, mt) in m.iter().enumerate() {
                    let off = self.member_offset(ty, k as u32)?;
                    let md = self
                        .decl
                        .member_decos
                        .get(&(ty, k as u32))
                        .copied()
                        .unwrap_or_default();
                    let ml = MatLayout {
                        stride: md.matrix_stride,
                        row_major: md.row_major,
                    };
                    v.push(self.load_mem(
                        space,
                        dyn_off,
                        konst + off,
                        align,
                        *mt,
                        ml,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(FVal::C(v))
            }
            SType::RuntimeArray(_) => unsupported("loading a whole runtime array"),
            _ => invalid("load of a non-data type"),
        }
    }

    pub(super) fn elem_stride(&self, arr: u32, elem: u32) -> Res<u32> {
        match self.array_stride(arr) {
            Some(s) => Ok(s),
            None => {
                let (s, a) = self.natural(elem, 0)?;
                Ok(s.next_multiple_of(a))
            }
        }
    }

    pub(super) fn store_ptr(&mut self, p: &Ptr, v: &FVal) -> Res<()> {
        match p {
            Ptr::Image { .. } | Ptr::Sampled { .. } | Ptr::Texel { .. } => {
                invalid("OpStore to an image")
            }
            Ptr::Var { tree, .. } => self.store_tree(tree, v),
            Ptr::VarComp { var, comp, .. } => {
                let ty = self.f.vars[var.0 as usize];
                let old = self.emit(ty, Op::LoadVar(*var))?;
                let x = v.v()?;
                if self.ty(x) != ty.scalar_type() {
                    return invalid("component store type");
                }
                let new = match comp {
                    Ok(c) if *c < ty.comps => self.emit(ty, Op::Insert(old, x, *c))?,
                    Ok(_) => return invalid("component index out of range"),
                    Err(i) => self.dyn_insert(old, x, *i)?,
                };
                self.emit_void(Op::StoreVar(*var, new))
            }
            Ptr::Builtin { .. } => invalid("store to an input built-in"),
            Ptr::Mem {
                space,
                dyn_off,
                konst,
                align,
                ty,
                mat,
                comp_stride,
            } => {
                if matches!(space, Space::Ubo(_) | Space::UboArray(_) | Space::Push) {
                    return invalid("store to read-only memory");
                }
                self.store_mem(
                    *space,
                    *dyn_off,
                    *konst,
                    *align,
                    *ty,
                    *mat,
                    *comp_stride,
                    v,
                    0,
                )
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn store_mem(
        &mut self,
        space: Space,
        dyn_off: Option<Value>,
        konst: u32,
        align: u32,
        ty: u32,
        mat: MatLayout,
        comp_stride: Option<u32>,
        v: &FVal,
        depth: u32,
    ) -> Res<()> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        let al = |k: u32| align.min(pow2_div(k));
        match self.stype(ty)? {
            SType::Bool => {
                let x = v.v()?;
                let x = self.alu(AluOp::B2i, Type::I32, &[x])?;
                let off = self.offset_value(dyn_off, konst)?;
                self.emit_void(Op::Store {
                    space,
                    offset: off,
                    value: x,
                    align: al(konst),
                })
            }
            SType::Int(_)
            | SType::Float(_)
            | SType::Pointer(StorageClass::PhysicalStorageBuffer, _) => {
                let x = v.v()?;
                if self.ty(x) != self.ir_type(ty)? {
                    return invalid("stored value type");
                }
                let off = self.offset_value(dyn_off, konst)?;
                self.emit_void(Op::Store {
                    space,
                    offset: off,
                    value: x,
                    align: al(konst),
                })
            }
            SType::Vector(e, n) => {
                let x = v.v()?;
                let et = self.scalar_ir_type(e)?;
                if self.ty(x) != et.vec(n) {
                    return invalid("stored vector type");
                }
                if et.is_bool() || comp_stride.is_some_and(|s| s != et.comp_bytes()) {
                    let stride = comp_stride.unwrap_or(4);
                    for k in 0..n {
                        let c = self.extract(x, k)?;
                        self.store_mem(
                            space,
                            dyn_off,
                            konst + u32::from(k) * stride,
                            align,
                            e,
                            mat,
                            None,
                            &FVal::V(c),
                            depth + 1,
                        )?;
                    }
                    return Ok(());
                }
                let off = self.offset_value(dyn_off, konst)?;
                self.emit_void(Op::Store {
                    space,
                    offset: off,
                    value: x,
                    align: al(konst),
                })
            }
            SType::Matrix(c, n) => {
                let cols = v.comps()?.to_vec();
                if cols.len() != usize::from(n) {
                    return invalid("matrix shape");
                }
                let (_, ca) = self.natural(c, depth + 1)?;
                let stride = mat.stride.unwrap_or(ca);
                let SType::Vector(e, _) = self.stype(c)? else {
                    return invalid("matrix column");
                };
                let esz = self.scalar_ir_type(e)?.comp_bytes();
                for (k, col) in cols.iter().enumerate() {
                    let k = k as u32;
                    if mat.row_major {
                        self.store_mem(
                            space,
                            dyn_off,
                            konst + k * esz,
                            align,
                            c,
                            MatLayout::default(),
                            Some(stride),
                            col,
                            depth + 1,
                        )?;
                    } else {
                        self.store_mem(
                            space,
                            dyn_off,
                            konst + k * stride,
                            align,
                            c,
                            MatLayout::default(),
                            None,
                            col,
                            depth + 1,
                        )?;
                    }
                }
                Ok(())
            }
            SType::Array(e, n) => {
                let els = v.comps()?.to_vec();
                if els.len() != n as usize {
                    return invalid("array shape");
                }
                let stride = self.elem_stride(ty, e)?;
                for (k, x) in els.iter().enumerate() {
                    self.store_mem(
                        space,
                        dyn_off,
                        konst + k as u32 * stride,
                        align,
                        e,
                        mat,
                        None,
                        x,
                        depth + 1,
                    )?;
                }
                Ok(())
            }
            SType::Struct(m) => {
                let els = v.comps()?.to_vec();
                if els.len() != m.len() {
                    return invalid("struct shape");
                }
                for (k, mt) in m.iter().enumerate() {
                    let off = self.member_offset(ty, k as u32)?;
                    let md = self
                        .decl
                        .member_decos
                        .get(&(ty, k as u32))
                        .copied()
                        .unwrap_or_default();
                    let ml = MatLayout {
                        stride: md.matrix_stride,
                        row_major: md.row_major,
                    };
                    self.store_mem(
                        space,
                        dyn_off,
                        konst + off,
                        align,
                        *mt,
                        ml,
                        None,
                        &els[k],
                        depth + 1,
                    )?;
                }
                Ok(())
            }
            _ => invalid("store of a non-data type"),
        }
    }

    pub(super) fn dyn_extract(&mut self, v: Value, idx: Value) -> Res<Value> {
        let t = self.ty(v);
        let idx = self.as_i32(idx)?;
        let mut r = self.extract(v, 0)?;
        for k in 1..t.comps {
            let c = self.extract(v, k)?;
            let kk = self.i32c(u32::from(k))?;
            let eq = self.alu(AluOp::Ieq, Type::B1, &[idx, kk])?;
            r = self.alu(AluOp::Bcsel, t.scalar_type(), &[eq, c, r])?;
        }
        Ok(r)
    }

    pub(super) fn dyn_insert(&mut self, v: Value, x: Value, idx: Value) -> Res<Value> {
        let t = self.ty(v);
        let idx = self.as_i32(idx)?;
        let mut comps = Vec::new();
        for k in 0..t.comps {
            let c = self.extract(v, k)?;
            let kk = self.i32c(u32::from(k))?;
            let eq = self.alu(AluOp::Ieq, Type::B1, &[idx, kk])?;
            comps.push(self.alu(AluOp::Bcsel, t.scalar_type(), &[eq, x, c])?);
        }
        self.emit(t, Op::Vec(comps))
    }

    pub(super) fn builtin(&mut self, b: BuiltIn) -> Res<FVal> {
        let sv = match b {
            BuiltIn::GlobalInvocationId => SysVal::GlobalInvocationId,
            BuiltIn::LocalInvocationId => SysVal::LocalInvocationId,
            BuiltIn::LocalInvocationIndex => SysVal::LocalInvocationIndex,
            BuiltIn::WorkgroupId => SysVal::WorkgroupId,
            BuiltIn::NumWorkgroups => SysVal::NumWorkgroups,
            BuiltIn::SubgroupSize => SysVal::SubgroupSize,
            BuiltIn::SubgroupId => SysVal::SubgroupId,
            BuiltIn::SubgroupLocalInvocationId => SysVal::SubgroupInvocation,
            BuiltIn::NumSubgroups => SysVal::NumSubgroups,
            BuiltIn::WorkgroupSize => {
                let ls = self.iface.local_size;
                let v = self.emit(
                    Type::I32.vec(3),
                    Op::Const(ls.iter().map(|x| u64::from(*x)).collect()),
                )?;
                return Ok(FVal::V(v));
            }
            BuiltIn::SubgroupEqMask
            | BuiltIn::SubgroupGeMask
            | BuiltIn::SubgroupGtMask
            | BuiltIn::SubgroupLeMask
            | BuiltIn::SubgroupLtMask => return self.subgroup_mask(b),
            other => return unsupported(format!("built-in {other:?} in a compute shader")),
        };
        Ok(FVal::V(self.emit(sv.ty(), Op::SysVal(sv))?))
    }

    pub(super) fn access_chain(&mut self, base: Ptr, idx: &[u32], blk: u32) -> Res<Ptr> {
        let mut p = base;
        for &id in idx {
            let c = self.decl.consts.get(&id).and_then(|(_, c)| {
                if let Const::Scalar(v) = c {
                    Some(*v as u32)
                } else {
                    None
                }
            });
            let dynv = if c.is_none() {
                Some(self.getv(id, blk)?)
            } else {
                None
            };
            p = match p {
                Ptr::Mem {
                    space,
                    dyn_off,
                    konst,
                    align,
                    ty,
                    mat,
                    comp_stride,
                } => {
                    let mut np = Ptr::Mem {
                        space,
                        dyn_off,
                        konst,
                        align,
                        ty,
                        mat,
                        comp_stride: None,
                    };
                    let Ptr::Mem {
                        dyn_off: d,
                        konst: k,
                        align: a,
                        ty: t,
                        mat: m,
                        comp_stride: cs,
                        ..
                    } = &mut np
                    else {
                        unreachable!()
                    };
                    let mut step = |this: &mut Self, stride: u32, nt: u32| -> Res<()> {
                        match (c, dynv) {
                            (Some(c), _) => {
                                *k = k
                                    .checked_add(c.checked_mul(stride).ok_or_else(|| {
                                        FrontendError::Invalid("offset overflow".into())
                                    })?)
                                    .ok_or_else(|| {
                                        FrontendError::Invalid("offset overflow".into())
                                    })?;
                            }
                            (None, Some(v)) => {
                                *d = Some(this.add_dyn(*d, v, stride)?);
                                *a = (*a).min(pow2_div(stride));
                            }
                            _ => unreachable!(),
                        }
                        *t = nt;
                        Ok(())
                    };
                    let desc_array = match (self.stype(ty)?, space) {
                        (SType::Array(e, n), _) if self.is_block(e) => Some((e, n)),
                        (SType::RuntimeArray(e), Space::Ssbo(b) | Space::Ubo(b))
                            if self.is_block(e) =>
                        {
                            let n =
                                self.iface.runtime_counts.get(&b).copied().ok_or_else(|| {
                                    FrontendError::Invalid("runtime array of blocks".into())
                                })?;
                            Some((e, n))
                        }
                        _ => None,
                    };
                    if let Some((e, n)) = desc_array {
                        // An array of blocks is a descriptor array: element k is its own
                        // buffer at binding-table entry first + k.
                        let space = match (c, dynv, space) {
                            (Some(c), _, _) if c >= n => {
                                return invalid("descriptor array index out of range")
                            }
                            (Some(c), _, Space::Ssbo(b)) => Space::Ssbo(b + c),
                            (Some(c), _, Space::Ubo(b)) => Space::Ubo(b + c),
                            // A run-time index: the back end picks the binding-table entry
                            // (docs/descriptors.md).
                            (None, Some(v), Space::Ssbo(_) | Space::Ubo(_)) => {
                                let (Space::Ssbo(base) | Space::Ubo(base)) = space else {
                                    unreachable!()
                                };
                                let x = BufIndex {
                                    base,
                                    count: n,
                                    index: self.as_i32(v)?,
                                    nonuniform: self.deco(id, Decoration::NonUniform).is_some(),
                                };
                                if space.is_ssbo() {
                                    Space::SsboArray(x)
                                } else {
                                    Space::UboArray(x)
                                }
                            }
                            _ => return invalid("array of blocks outside a buffer"),
                        };
                        p = Ptr::Mem {
                            space,
                            dyn_off,
                            konst,
                            align,
                            ty: e,
                            mat,
                            comp_stride: None,
                        };
                        continue;
                    }
                    match self.stype(ty)? {
                        SType::Struct(members) => {
                            let Some(c) = c else {
                                return invalid("struct index must be constant");
                            };
                            let nt = *members.get(c as usize).ok_or_else(|| {
                                FrontendError::Invalid("member index out of range".into())
                            })?;
                            let off = self.member_offset(ty, c)?;
                            let md = self
                                .decl
                                .member_decos
                                .get(&(ty, c))
                                .copied()
                                .unwrap_or_default();
                            *k = k
                                .checked_add(off)
                                .ok_or_else(|| FrontendError::Invalid("offset overflow".into()))?;
                            *t = nt;
                            *m = MatLayout {
                                stride: md.matrix_stride,
                                row_major: md.row_major,
                            };
                        }
                        SType::Array(e, _) | SType::RuntimeArray(e) => {
                            let stride = self.elem_stride(ty, e)?;
                            step(self, stride, e)?;
                        }
                        SType::Matrix(col, _) => {
                            let (_, ca) = self.natural(col, 0)?;
                            let stride = mat.stride.unwrap_or(ca);
                            let SType::Vector(e, _) = self.stype(col)? else {
                                return invalid("matrix column");
                            };
                            let esz = self.scalar_ir_type(e)?.comp_bytes();
                            if mat.row_major {
                                step(self, esz, col)?;
                                *cs = Some(stride);
                            } else {
                                step(self, stride, col)?;
                            }
                            *m = MatLayout::default();
                        }
                        SType::Vector(e, _) => {
                            let esz = self.natural(e, 0)?.0;
                            step(self, comp_stride.unwrap_or(esz), e)?;
                        }
                        _ => return invalid("access chain into a scalar"),
                    }
                    np
                }
                Ptr::Var { tree, ty } => match (self.stype(ty)?, tree) {
                    (SType::Struct(m), VarTree::Comp(t)) => {
                        let c = c.ok_or_else(|| {
                            FrontendError::Invalid("struct index must be constant".into())
                        })? as usize;
                        Ptr::Var {
                            tree: t.get(c).cloned().ok_or_else(|| {
                                FrontendError::Invalid("index out of range".into())
                            })?,
                            ty: *m
                                .get(c)
                                .ok_or_else(|| FrontendError::Invalid("index".into()))?,
                        }
                    }
                    (SType::Array(e, _) | SType::Matrix(e, _), VarTree::Comp(t)) => {
                        let Some(c) = c else {
                            return unsupported(
                                "dynamic index into a function variable that was not demoted",
                            );
                        };
                        // Out-of-range constant indices are undefined; clamp to stay safe.
                        let c = (c as usize).min(t.len() - 1);
                        Ptr::Var {
                            tree: t[c].clone(),
                            ty: e,
                        }
                    }
                    (SType::Vector(_, n), VarTree::Leaf(var)) => {
                        let comp = match (c, dynv) {
                            (Some(c), _) => Ok((c as u8).min(n - 1)),
                            (None, Some(v)) => Err(v),
                            _ => unreachable!(),
                        };
                        Ptr::VarComp { var, comp }
                    }
                    _ => return invalid("access chain does not match the variable type"),
                },
                Ptr::Builtin { b, comp: None, ty } => match self.stype(ty)? {
                    SType::Vector(e, n) => Ptr::Builtin {
                        b,
                        comp: Some(match (c, dynv) {
                            (Some(c), _) => Ok((c as u8).min(n - 1)),
                            (None, Some(v)) => Err(v),
                            _ => unreachable!(),
                        }),
                        ty: e,
                    },
                    _ => return invalid("access chain into a scalar built-in"),
                },
                Ptr::VarComp { .. } | Ptr::Builtin { .. } => {
                    return invalid("access chain into a scalar")
                }
                Ptr::Image {
                    bti,
                    count,
                    ty,
                    index: None,
                } => match (c, dynv) {
                    (Some(c), _) if c < count => Ptr::Image {
                        bti: bti + c,
                        count: 1,
                        ty,
                        index: None,
                    },
                    (Some(_), _) => return invalid("image array index out of range"),
                    // A run-time index: the back end picks the binding-table entry (and the
                    // sampler-table entry of a combined image sampler), docs/images.md.
                    (None, Some(v)) => Ptr::Image {
                        bti,
                        count: 1,
                        ty,
                        index: Some(BufIndex {
                            base: bti,
                            count,
                            index: self.as_i32(v)?,
                            nonuniform: self.deco(id, Decoration::NonUniform).is_some(),
                        }),
                    },
                    _ => unreachable!(),
                },
                Ptr::Image { .. } => return invalid("access chain into an image array element"),
                Ptr::Texel { .. } => return invalid("access chain into a texel pointer"),
                Ptr::Sampled { .. } => return invalid("access chain into a sampled image"),
            };
        }
        Ok(p)
    }

    pub(super) fn ptr_of(&mut self, id: u32, blk: u32) -> Res<Ptr> {
        match self.get(id, blk)? {
            FVal::P(p) => Ok(*p),
            FVal::V(v) => match self.physical_pointee(id) {
                Some(pointee) => Ok(Ptr::Mem {
                    space: Space::Global(v),
                    dyn_off: None,
                    konst: 0,
                    // Unknown until an `Aligned` memory operand says more.
                    align: 1,
                    ty: pointee,
                    mat: MatLayout::default(),
                    comp_stride: None,
                }),
                None => invalid(format!("%{id} is not a pointer")),
            },
            FVal::C(_) => invalid(format!("%{id} is not a pointer")),
        }
    }

    /// The pointee type of `id` when it is a `PhysicalStorageBuffer` pointer (a value held as
    /// its 64-bit address).
    pub(super) fn physical_pointee(&self, id: u32) -> Option<u32> {
        let t = self.decl.result_types.get(&id)?;
        match self.decl.types.get(t)? {
            SType::Pointer(StorageClass::PhysicalStorageBuffer, p) => Some(*p),
            _ => None,
        }
    }

    /// True if type `t` is a `PhysicalStorageBuffer` pointer.
    pub(super) fn is_physical_pointer(&self, t: u32) -> bool {
        matches!(
            self.decl.types.get(&t),
            Some(SType::Pointer(StorageClass::PhysicalStorageBuffer, _))
        )
    }

    /// The 64-bit address a pointer into global memory points at: its base plus the
    /// sign-extended offset the access chain added.
    pub(super) fn global_address(&mut self, p: &Ptr) -> Res<Value> {
        let Ptr::Mem {
            space: Space::Global(base),
            dyn_off,
            konst,
            ..
        } = p
        else {
            return invalid("not a pointer into PhysicalStorageBuffer memory");
        };
        if dyn_off.is_none() && *konst == 0 {
            return Ok(*base);
        }
        let off = self.offset_value(*dyn_off, *konst)?;
        let off = self.alu(AluOp::I2i, Type::int(64), &[off])?;
        self.alu(AluOp::Iadd, Type::int(64), &[*base, off])
    }

    /// `OpPtrDiff` (SPIR-V 1.4): the number of elements from Operand 2 to Operand 1, both
    /// into the same array of buffer or shared memory (or `PhysicalStorageBuffer` addresses).
    /// An element is the pointer type's ArrayStride, or the pointee's size without one, as
    /// `OpPtrAccessChain` steps; the byte difference divides exactly (the specification
    /// leaves pointers into different arrays undefined).
    pub(super) fn ptr_diff(&mut self, i: &rspirv::dr::Instruction, blk: u32) -> Res<Value> {
        let (ida, idb) = (op_id(i, 0)?, op_id(i, 1)?);
        let rt = self.ir_type(rty(i)?)?;
        if rt.kind != Kind::Int || rt.comps != 1 {
            return invalid("OpPtrDiff result must be a scalar integer");
        }
        let ptr_ty = self.decl.result_types.get(&ida).copied().unwrap_or(0);
        let pointee = match self.decl.types.get(&ptr_ty) {
            Some(SType::Pointer(_, p)) => *p,
            _ => return invalid("OpPtrDiff operand is not a pointer"),
        };
        let stride = match self.array_stride(ptr_ty) {
            Some(s) => s,
            None => {
                let (s, a) = self.natural(pointee, 0)?;
                s.next_multiple_of(a)
            }
        };
        if stride == 0 {
            return invalid("OpPtrDiff on a zero-sized pointee");
        }
        let (pa, pb) = (self.ptr_of(ida, blk)?, self.ptr_of(idb, blk)?);
        let (bytes, wide) = match (&pa, &pb) {
            (
                Ptr::Mem {
                    space: Space::Global(_),
                    ..
                },
                _,
            ) => {
                let (a, b) = (self.global_address(&pa)?, self.global_address(&pb)?);
                (self.alu(AluOp::Isub, Type::int(64), &[a, b])?, true)
            }
            (
                Ptr::Mem {
                    space: sa,
                    dyn_off: da,
                    konst: ka,
                    ..
                },
                Ptr::Mem {
                    space: sb,
                    dyn_off: db,
                    konst: kb,
                    ..
                },
            ) if sa == sb => {
                let (da, db, ka, kb) = (*da, *db, *ka, *kb);
                let a = self.offset_value(da, ka)?;
                let b = self.offset_value(db, kb)?;
                (self.alu(AluOp::Isub, Type::I32, &[a, b])?, false)
            }
            _ => {
                return unsupported(
                    "OpPtrDiff on pointers other than two into one buffer, shared memory or \
                     physical storage",
                )
            }
        };
        let bt = if wide { Type::int(64) } else { Type::I32 };
        let s = self.konst(bt, u64::from(stride))?;
        let n = self.alu(AluOp::Idiv, bt, &[bytes, s])?;
        if rt.bits == bt.bits {
            Ok(n)
        } else {
            self.alu(AluOp::I2i, rt, &[n])
        }
    }

    /// `OpPtrAccessChain` on a `PhysicalStorageBuffer` pointer: the element index steps by
    /// the pointer type's ArrayStride (the pointee's size without one) in 64-bit
    /// arithmetic, so negative and large indices address correctly; the remaining indices
    /// form an ordinary access chain from there.
    pub(super) fn ptr_access_chain(&mut self, base_id: u32, idx: &[u32], blk: u32) -> Res<Value> {
        let base = self.ptr_of(base_id, blk)?;
        let Some(pointee) = self.physical_pointee(base_id) else {
            return unsupported("OpPtrAccessChain on pointers other than PhysicalStorageBuffer");
        };
        let Some((&elem, rest)) = idx.split_first() else {
            return invalid("OpPtrAccessChain without an element index");
        };
        let ptr_ty = self.decl.result_types.get(&base_id).copied().unwrap_or(0);
        let stride = match self.array_stride(ptr_ty) {
            Some(s) => s,
            None => {
                let (s, a) = self.natural(pointee, 0)?;
                s.next_multiple_of(a)
            }
        };
        let addr = self.global_address(&base)?;
        let e = self.getv(elem, blk)?;
        let et = self.ty(e);
        if et.kind != Kind::Int || et.comps != 1 {
            return invalid("OpPtrAccessChain element is not a scalar integer");
        }
        let e = if et.bits == 64 {
            e
        } else {
            self.alu(AluOp::I2i, Type::int(64), &[e])?
        };
        let s = self.konst(Type::int(64), u64::from(stride))?;
        let step = self.alu(AluOp::Imul, Type::int(64), &[e, s])?;
        let addr = self.alu(AluOp::Iadd, Type::int(64), &[addr, step])?;
        let p = Ptr::Mem {
            space: Space::Global(addr),
            dyn_off: None,
            konst: 0,
            align: 1,
            ty: pointee,
            mat: MatLayout::default(),
            comp_stride: None,
        };
        let p = self.access_chain(p, rest, blk)?;
        self.global_address(&p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;

    /// An access chain into a runtime array scales the index by the ArrayStride decoration
    /// and adds the member's Offset.
    #[test]
    fn access_chain_uses_array_stride_and_offset() {
        check_ir(
            "access_chain_uses_array_stride_and_offset",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            OpDecorate %arr ArrayStride 16
            OpDecorate %Buf BufferBlock
            OpMemberDecorate %Buf 0 Offset 0
            OpMemberDecorate %Buf 1 Offset 32
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 0
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %arr = OpTypeRuntimeArray %v4f32
            %Buf = OpTypeStruct %u32 %arr
            %ptr_buf = OpTypePointer Uniform %Buf
            %ptr_f32 = OpTypePointer Uniform %f32
            %buf = OpVariable %ptr_buf Uniform
            %c1 = OpConstant %i32 1
            %c2 = OpConstant %i32 2
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            %p = OpAccessChain %ptr_f32 %buf %c1 %i %c2
            %v = OpLoad %f32 %p
            %w = OpFAdd %f32 %v %v
            OpStore %p %w
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32x3 = sysval global_invocation_id
                    %1:i32 = extract %0, 0
                    %2:i32 = const 16
                    %3:i32 = imul %1, %2
                    %4:i32 = const 40
                    %5:i32 = iadd %3, %4
                    %6:f32 = load ssbo[0] %5 align 8
                    %7:f32 = fadd %6, %6
                    %8:i32 = const 40
                    %9:i32 = iadd %3, %8
                    store ssbo[0] %9, %7 align 8
                    break
                }
            }
            ",
        );
    }

    /// A PhysicalStorageBuffer pointer is its 64-bit address: OpConvertUToPtr keeps the value,
    /// OpPtrAccessChain steps by the pointer type's ArrayStride in 64-bit arithmetic, the
    /// member access adds its Offset, and the load goes to `global[%address]`.
    #[test]
    fn physical_pointer_access_is_a_global_load_at_the_computed_address() {
        check_ir(
            "physical_pointer_access_is_a_global_load_at_the_computed_address",
            "
            OpCapability Int64
            OpCapability PhysicalStorageBufferAddresses
            OpExtension \"SPV_KHR_physical_storage_buffer\"
            OpDecorate %S Block
            OpMemberDecorate %S 0 Offset 0
            OpMemberDecorate %S 1 Offset 8
            OpDecorate %pS ArrayStride 16
            %u64 = OpTypeInt 64 0
            %S = OpTypeStruct %u32 %f32
            %pS = OpTypePointer PhysicalStorageBuffer %S
            %pf = OpTypePointer PhysicalStorageBuffer %f32
            %a = OpConstant %u64 4096
            %m1 = OpConstant %i32 -1
            %c1 = OpConstant %i32 1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %p = OpConvertUToPtr %pS %a
            %q = OpPtrAccessChain %pf %p %m1 %c1
            %v = OpLoad %f32 %q Aligned 4
            %w = OpFAdd %f32 %v %v
            OpStore %q %w Aligned 4
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i64 = const 4096
                    %1:i32 = const -1
                    %2:i64 = i2i %1
                    %3:i64 = const 16
                    %4:i64 = imul %2, %3
                    %5:i64 = iadd %0, %4
                    %6:i32 = const 8
                    %7:i64 = i2i %6
                    %8:i64 = iadd %5, %7
                    %9:i32 = const 0
                    %10:f32 = load global[%8] %9 align 1
                    %11:f32 = fadd %10, %10
                    %12:i32 = const 0
                    store global[%8] %12, %11 align 1
                    break
                }
            }
            ",
        );
    }

    /// A Function array indexed with a non-constant index lives in local memory.
    #[test]
    fn dynamically_indexed_function_array_goes_to_local_memory() {
        check_ir(
            "dynamically_indexed_function_array_goes_to_local_memory",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %c4 = OpConstant %u32 4
            %arr = OpTypeArray %f32 %c4
            %ptr_arr = OpTypePointer Function %arr
            %ptr_f = OpTypePointer Function %f32
            %one = OpConstant %f32 1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %a = OpVariable %ptr_arr Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            %p = OpAccessChain %ptr_f %a %i
            OpStore %p %one
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 16 push 0
            fn main {
                loop {
                    %0:i32x3 = sysval global_invocation_id
                    %1:i32 = extract %0, 0
                    %2:i32 = const 4
                    %3:i32 = imul %1, %2
                    %4:f32 = const 1.0
                    store local %3, %4 align 4
                    break
                }
            }
            ",
        );
    }

    /// A column of a row-major matrix in a uniform buffer is read component by component,
    /// MatrixStride bytes apart.
    #[test]
    fn row_major_matrix_column_is_read_with_matrix_stride() {
        check_ir(
            "row_major_matrix_column_is_read_with_matrix_stride",
            "
            OpDecorate %Ubo Block
            OpMemberDecorate %Ubo 0 Offset 0
            OpMemberDecorate %Ubo 0 RowMajor
            OpMemberDecorate %Ubo 0 MatrixStride 16
            OpDecorate %ubo DescriptorSet 0
            OpDecorate %ubo Binding 0
            %mat = OpTypeMatrix %v2f32 2
            %Ubo = OpTypeStruct %mat
            %ptr_ubo = OpTypePointer Uniform %Ubo
            %ptr_col = OpTypePointer Uniform %v2f32
            %ubo = OpVariable %ptr_ubo Uniform
            %ptr_v = OpTypePointer Function %v2f32
            %c0 = OpConstant %i32 0
            %c1 = OpConstant %i32 1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_v Function
            %p = OpAccessChain %ptr_col %ubo %c0 %c1
            %col = OpLoad %v2f32 %p
            OpStore %x %col
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f32x2
                loop {
                    %0:f32x2 = const 0.0, 0.0
                    store_var $0, %0
                    %1:i32 = const 4
                    %2:f32 = load ubo[0] %1 align 4
                    %3:i32 = const 20
                    %4:f32 = load ubo[0] %3 align 4
                    %5:f32x2 = vec %2, %4
                    store_var $0, %5
                    break
                }
            }
            ",
        );
    }
}
