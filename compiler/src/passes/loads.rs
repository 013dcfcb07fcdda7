//! Load CSE: a load of the same type from the same space at the same offset value as an
//! earlier load that dominates it reuses that load's result, unless something between them
//! may have written the memory (see [`opt_load_cse`]). Each load is a SEND message of its
//! own in the back end, so a repeated read (`x[e] * y[e]` twice in a loop body, a buffer
//! value read again after a store to shared memory) costs a message each time.
//!
//! What may write a load's memory, by class (the Vulkan rules on aliasing):
//! - uniform buffers and push constants are read-only in a shader: nothing clobbers them;
//!   so are the storage buffers in `Function::readonly_buffers`: those the module declares
//!   `NonWritable`, and those no store or atomic of the shader names while no variable bound
//!   there is `Aliased` and no physical pointer is written (the front end's
//!   `readonly_buffers`: a declaration not decorated `Aliased` may be assumed not to alias
//!   another one, SPIR-V 2.18.2);
//! - the other storage buffers, physical-pointer memory and texel buffers are treated as
//!   views of the same memory: any store or atomic to one of them, or any image write or
//!   atomic, clobbers every such storage-buffer load (keeping the written bindings apart by
//!   their declarations found no further load to merge in the bench corpus);
//! - shared memory and private memory are their own classes: a store to shared memory does
//!   not clobber a storage-buffer load and the other way round;
//! - a barrier (control or memory) clobbers storage-buffer and shared-memory loads: it may
//!   make other invocations' writes visible.
//!
//! Loads of writable memory are not carried into a loop body (a loop re-reading a value
//! another invocation writes would otherwise read it once), and none are merged when the
//! module marks any memory `Volatile` (`Function::volatile_memory`): a volatile access must
//! be performed each time.

use crate::hash::HashMap;
use crate::ir::*;

/// The classes of memory a load may read and an instruction may write (bits).
pub(super) const READ_ONLY: u8 = 0;
const BUFFER: u8 = 1;
const SHARED: u8 = 2;
const LOCAL: u8 = 4;

/// The class of `s`; `ro` is the function's `readonly_buffers`.
pub(super) fn class(s: Space, ro: &[u32]) -> u8 {
    let read_only = |b: u32| ro.binary_search(&b).is_ok();
    match s {
        Space::Ubo(_) | Space::UboArray(_) | Space::Push => READ_ONLY,
        Space::Ssbo(b) if read_only(b) => READ_ONLY,
        Space::SsboArray(x) if (x.base..x.base + x.count).all(read_only) => READ_ONLY,
        Space::Ssbo(_) | Space::SsboArray(_) | Space::Global(_) => BUFFER,
        Space::Shared => SHARED,
        Space::Local => LOCAL,
    }
}

/// The classes of memory `op` may write (`ro` as for [`class`]).
pub(super) fn clobbers(op: &Op, ro: &[u32]) -> u8 {
    match op {
        // A store to a read-only space is invalid; count it as writing everything.
        Op::Store { space, .. } | Op::Atomic { space, .. } => match class(*space, ro) {
            READ_ONLY => BUFFER | SHARED | LOCAL,
            c => c,
        },
        Op::Barrier { .. } => BUFFER | SHARED,
        Op::Image(op, ..) if !op.is_read() => BUFFER,
        Op::Image(..)
        | Op::Const(_)
        | Op::Alu(..)
        | Op::Vec(_)
        | Op::Extract(..)
        | Op::Insert(..)
        | Op::Swizzle(..)
        | Op::LoadVar(_)
        | Op::StoreVar(..)
        | Op::Load { .. }
        | Op::SysVal(_)
        | Op::BufferSize(_)
        | Op::Subgroup(..) => 0,
    }
}

/// The classes of memory anything in `b` may write.
fn block_clobbers(b: &Block, ro: &[u32]) -> u8 {
    b.iter()
        .map(|n| match n {
            Node::Instr(i) => clobbers(&i.op, ro),
            Node::If(i) => block_clobbers(&i.then_, ro) | block_clobbers(&i.else_, ro),
            Node::Loop(l) => block_clobbers(&l.body, ro),
            Node::Break(_) | Node::Continue(_) | Node::Yield(_) => 0,
        })
        .fold(0, |a, c| a | c)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct LoadKey {
    space: Space,
    offset: Value,
    ty: Type,
}

type Avail = HashMap<LoadKey, Value>;

struct LoadCse<'a> {
    types: &'a [Type],
    volatile: bool,
    readonly: &'a [u32],
    subst: HashMap<Value, Value>,
}

impl LoadCse<'_> {
    fn map(&self, v: &mut Value) {
        if let Some(x) = self.subst.get(v) {
            *v = *x;
        }
    }

    fn block(&mut self, b: &mut Block, avail: &mut Avail) {
        let mut keep = vec![true; b.len()];
        for (k, n) in b.iter_mut().enumerate() {
            match n {
                Node::Instr(i) => {
                    for s in i.op.srcs_mut() {
                        self.map(s);
                    }
                    if let (Op::Load { space, offset, .. }, Some(d)) = (&i.op, i.dst) {
                        if self.volatile && class(*space, self.readonly) != READ_ONLY {
                            continue;
                        }
                        let key = LoadKey {
                            space: *space,
                            offset: *offset,
                            ty: self.types[d.0 as usize],
                        };
                        match avail.get(&key) {
                            Some(&prev) => {
                                self.subst.insert(d, prev);
                                keep[k] = false;
                            }
                            None => {
                                avail.insert(key, d);
                            }
                        }
                        continue;
                    }
                    let c = clobbers(&i.op, self.readonly);
                    if c != 0 {
                        avail.retain(|key, _| class(key.space, self.readonly) & c == 0);
                    }
                }
                Node::If(i) => {
                    self.map(&mut i.cond);
                    let mut t = avail.clone();
                    self.block(&mut i.then_, &mut t);
                    let mut e = avail.clone();
                    self.block(&mut i.else_, &mut e);
                    // Still valid after the `if`: what neither arm clobbered.
                    avail.retain(|key, v| t.get(key) == Some(v) && e.get(key) == Some(v));
                }
                Node::Loop(l) => {
                    for p in &mut l.params {
                        self.map(&mut p.1);
                    }
                    let c = block_clobbers(&l.body, self.readonly);
                    avail.retain(|key, _| class(key.space, self.readonly) & c == 0);
                    // Only read-only memory is carried into the body.
                    let mut inner: Avail = avail
                        .iter()
                        .filter(|(key, _)| class(key.space, self.readonly) == READ_ONLY)
                        .map(|(k, v)| (*k, *v))
                        .collect();
                    self.block(&mut l.body, &mut inner);
                }
                Node::Break(v) | Node::Continue(v) | Node::Yield(v) => {
                    for x in v {
                        self.map(x);
                    }
                }
            }
        }
        let mut keep = keep.into_iter();
        b.retain(|_| keep.next().unwrap_or(true));
    }
}

/// Replaces each load by an earlier equal load that dominates it when no instruction that
/// may write its memory lies between them (module doc). Returns true if anything changed.
pub fn opt_load_cse(f: &mut Function) -> bool {
    let types = std::mem::take(&mut f.values);
    let mut cx = LoadCse {
        types: &types,
        volatile: f.volatile_memory,
        readonly: &f.readonly_buffers,
        subst: HashMap::default(),
    };
    cx.block(&mut f.body, &mut Avail::default());
    let changed = !cx.subst.is_empty();
    f.values = types;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn repeated_buffer_load_is_reused() {
        check_pass(
            opt_load_cse,
            "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[0] %0 align 4
            %3:f32 = fmul %1, %2
            store ssbo[1] %0, %3 align 4
            ",
            "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %3:f32 = fmul %1, %1
            store ssbo[1] %0, %3 align 4
            ",
        );
    }

    #[test]
    fn non_writable_buffer_loads_survive_stores_and_enter_loops() {
        // Binding 0 is NonWritable: the store to binding 1 cannot change it, and the loop
        // body may reuse the load from before the loop.
        check_pass(
            opt_load_cse,
            "
            readonly_buffers 0
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            store ssbo[1] %0, %1 align 4
            %2:f32 = load ssbo[0] %0 align 4
            store ssbo[1] %0, %2 align 4
            loop {
                %3:f32 = load ssbo[0] %0 align 4
                store ssbo[1] %0, %3 align 4
                break
            }
            ",
            "
            readonly_buffers 0
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            store ssbo[1] %0, %1 align 4
            store ssbo[1] %0, %1 align 4
            loop {
                store ssbo[1] %0, %1 align 4
                break
            }
            ",
        );
    }

    #[test]
    fn store_to_another_binding_clobbers_buffer_loads() {
        // Bindings 0 and 1 may be the same buffer.
        let text = "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            store ssbo[1] %0, %1 align 4
            %2:f32 = load ssbo[0] %0 align 4
            store ssbo[1] %0, %2 align 4
            ";
        check_pass(opt_load_cse, text, text);
    }

    #[test]
    fn shared_store_does_not_clobber_buffer_or_uniform_loads() {
        check_pass(
            opt_load_cse,
            "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ubo[1] %0 align 4
            store shared %0, %1 align 4
            %3:f32 = load ssbo[0] %0 align 4
            %4:f32 = load ubo[1] %0 align 4
            %5:f32 = fadd %3, %4
            store shared %0, %5 align 4
            ",
            "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ubo[1] %0 align 4
            store shared %0, %1 align 4
            %5:f32 = fadd %1, %2
            store shared %0, %5 align 4
            ",
        );
    }

    #[test]
    fn barrier_clobbers_buffer_and_shared_but_not_uniform_loads() {
        check_pass(
            opt_load_cse,
            "
            %0:i32 = const 0
            %1:f32 = load shared %0 align 4
            %2:f32 = load ubo[0] %0 align 4
            control_barrier workgroup workgroup 0x108
            %3:f32 = load shared %0 align 4
            %4:f32 = load ubo[0] %0 align 4
            %5:f32 = fadd %3, %4
            %6:f32 = fadd %5, %1
            %7:f32 = fadd %6, %2
            store ssbo[1] %0, %7 align 4
            ",
            "
            %0:i32 = const 0
            %1:f32 = load shared %0 align 4
            %2:f32 = load ubo[0] %0 align 4
            control_barrier workgroup workgroup 0x108
            %3:f32 = load shared %0 align 4
            %5:f32 = fadd %3, %2
            %6:f32 = fadd %5, %1
            %7:f32 = fadd %6, %2
            store ssbo[1] %0, %7 align 4
            ",
        );
    }

    #[test]
    fn load_in_a_clobbering_arm_is_not_reused_after_the_if() {
        let text = "
            %0:i32 = const 0
            %1:b1 = const true
            %2:f32 = load ssbo[0] %0 align 4
            if %1 {
                store ssbo[0] %0, %2 align 4
            }
            %3:f32 = load ssbo[0] %0 align 4
            store ssbo[1] %0, %3 align 4
            ";
        check_pass(opt_load_cse, text, text);
    }

    #[test]
    fn loop_body_reuses_only_its_own_and_read_only_loads() {
        check_pass(
            opt_load_cse,
            "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ubo[1] %0 align 4
            loop {
                %3:f32 = load ssbo[0] %0 align 4
                %4:f32 = load ssbo[0] %0 align 4
                %5:f32 = load ubo[1] %0 align 4
                %6:f32 = fadd %3, %4
                %7:f32 = fadd %6, %5
                store shared %0, %7 align 4
                break
            }
            store shared %0, %1 align 4
            ",
            "
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ubo[1] %0 align 4
            loop {
                %3:f32 = load ssbo[0] %0 align 4
                %6:f32 = fadd %3, %3
                %7:f32 = fadd %6, %2
                store shared %0, %7 align 4
                break
            }
            store shared %0, %1 align 4
            ",
        );
    }

    #[test]
    fn volatile_memory_keeps_every_buffer_load() {
        let text = "
            volatile_memory
            %0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[0] %0 align 4
            %3:f32 = fadd %1, %2
            store ssbo[1] %0, %3 align 4
            ";
        check_pass(opt_load_cse, text, text);
    }

    #[test]
    fn different_types_or_offsets_are_different_loads() {
        let text = "
            %0:i32 = const 0
            %1:i32 = const 4
            %2:f32 = load ssbo[0] %0 align 4
            %3:i32 = load ssbo[0] %0 align 4
            %4:f32 = load ssbo[0] %1 align 4
            store shared %0, %2 align 4
            store shared %0, %3 align 4
            store shared %0, %4 align 4
            ";
        check_pass(opt_load_cse, text, text);
    }
}
