//! Copy coalescing: a register whose value ends in byte-for-byte copies into another (an
//! `if` arm's result, a `break` argument) is that other register from its first write on,
//! and the copies go.
//!
//! Selection writes an `if` result `r` by one `mov r, x` at the end of each arm, and a
//! loop's results by one before each `break`: the value `x` was computed into a register of
//! its own. The allocator's live intervals are linear (a register is live from its first to
//! its last reference), so `r`, written in the `then` arm and read after the `endif`, is live
//! across the whole `else` arm and may not share a register with the `else` arm's value:
//! the moves stay. Renaming `x` to `r` here removes them (brw gets the same from coalescing
//! its SSA-out copies).
//!
//! The same holds for a value copied into one register-aligned part of a larger register: a
//! message payload (an image store's coordinates and texel, one register per component)
//! built from values computed into registers of their own. The value is computed into its
//! part of the payload instead, when nothing else touches that part meanwhile.

use super::super::lir::{Base, LInst, LOp, Program};
use super::byte_copy;

/// Minimum over ranges of a fixed array (sparse table: O(n log n) to build, O(1) a query).
struct RangeMin {
    levels: Vec<Vec<u32>>,
}

impl RangeMin {
    fn new(a: Vec<u32>) -> RangeMin {
        let mut levels = vec![a];
        let mut w = 1;
        while 2 * w <= levels[0].len() {
            let prev = levels.last().expect("level 0");
            let next = (0..prev.len() - w)
                .map(|k| prev[k].min(prev[k + w]))
                .collect();
            levels.push(next);
            w *= 2;
        }
        RangeMin { levels }
    }

    /// Minimum over `[a, b]` (inclusive, a <= b).
    fn min(&self, a: usize, b: usize) -> u32 {
        let l = (usize::BITS - 1 - (b - a + 1).leading_zeros()) as usize;
        let t = &self.levels[l];
        t[a].min(t[b + 1 - (1 << l)])
    }
}

/// Whether `i` references virtual register `v` (destination or source).
fn refs_vreg(i: &LInst, v: u32) -> bool {
    i.dst.vreg() == Some(v) || i.srcs.iter().any(|s| s.vreg() == Some(v))
}

/// Coalesces copies (see the module documentation). A register `x` is renamed to `r` when:
///
/// - `x`'s last references are plain, unpredicated copies `mov r, x` (same bytes, no
///   conversion, not `WE_all`) that together write every byte of `r`, and `x` and `r` have
///   the same size; or they write every byte of one part of `r` that starts at a register
///   boundary (`x` is then renamed to that part), and only ALU and math instructions
///   reference `x` (a message reads and writes its registers whole, from their start);
///   `x`'s first reference writes it and does not read it, and no write of `x` uses
///   `WE_all` (which would write channels the copies do not);
/// - nothing else references `r` (for a part: those bytes of `r`) from `x`'s first write to
///   the last copy (from the `do` of a loop that range leaves, whose body may run again), so
///   `r` holds nothing live there;
/// - every copy is at the shallowest nesting of that range and no `break`/`continue` in it
///   leaves a loop it did not enter: each channel that wrote `x` reaches the copies, and
///   they run on every channel that wrote it, so `r` ends with the same bytes.
///
/// Each round renames each register at most once; rounds run to a fixed point (an `if`'s
/// two arms, nested `if` results).
pub fn coalesce_copies(prog: &mut Program) -> bool {
    let mut any = false;
    for _round in 0..8 {
        if !coalesce_once(prog) {
            break;
        }
        any = true;
    }
    any
}

fn coalesce_once(prog: &mut Program) -> bool {
    let n = prog.insts.len();
    let nv = prog.vregs.len();
    if n == 0 {
        return false;
    }
    const NONE: u32 = u32::MAX;
    // References of each register (instruction indices, ascending, once each).
    let mut refs: Vec<Vec<u32>> = vec![Vec::new(); nv];
    // Nesting depth of each instruction (control markers at their outer level), and for
    // each `break`/`continue` and `while` the `do` of its loop.
    let mut depth = vec![0u32; n];
    let mut jump_do = vec![NONE; n];
    let mut while_do = vec![NONE; n];
    let mut d = 0u32;
    let mut open: Vec<u32> = Vec::new();
    for (k, i) in prog.insts.iter().enumerate() {
        for o in std::iter::once(&i.dst).chain(i.srcs.iter()) {
            if let Some(v) = o.vreg() {
                let r = &mut refs[v as usize];
                if r.last() != Some(&(k as u32)) {
                    r.push(k as u32);
                }
            }
        }
        match i.op {
            LOp::If | LOp::Do => {
                depth[k] = d;
                d += 1;
                if i.op == LOp::Do {
                    open.push(k as u32);
                }
            }
            LOp::Else => depth[k] = d.saturating_sub(1),
            LOp::Endif => {
                d = d.saturating_sub(1);
                depth[k] = d;
            }
            LOp::While => {
                d = d.saturating_sub(1);
                depth[k] = d;
                while_do[k] = open.pop().unwrap_or(0);
            }
            LOp::Break | LOp::Cont => {
                depth[k] = d;
                jump_do[k] = open.last().copied().unwrap_or(0);
            }
            _ => depth[k] = d,
        }
    }
    let depth = RangeMin::new(depth);
    let jump_do = RangeMin::new(jump_do);
    let while_do = RangeMin::new(while_do);
    // Registers a message or gather reads or writes (whole, from their start).
    let whole_refs = super::taken_whole(prog, true);
    // Registers renamed this round, and the instruction ranges and byte ranges into which
    // each target took a renamed register's references this round.
    let mut gone = vec![false; nv];
    let mut claims: Vec<Vec<Claim>> = vec![Vec::new(); nv];
    let mut rename: Vec<(u32, u32, u32, Vec<u32>)> = Vec::new();
    for x in 0..nv as u32 {
        let rx = &refs[x as usize];
        let (Some(&f), Some(&last)) = (rx.first(), rx.last()) else {
            continue;
        };
        let Some((r, delta)) = copy_of(&prog.insts[last as usize], x) else {
            continue;
        };
        // `x`'s bytes land at `r`'s bytes `part` (all of `r`, or a register-aligned part).
        let (size_x, size_r) = (prog.vregs[x as usize].bytes, prog.vregs[r as usize].bytes);
        let Ok(at) = u32::try_from(-delta) else {
            continue;
        };
        let part = (at, at + size_x);
        let whole = at == 0 && size_x == size_r;
        if r == x
            || gone[r as usize]
            || !claims[x as usize].is_empty()
            || part.1 > size_r
            || !(whole || (at % 32 == 0 && !whole_refs[x as usize]))
        {
            continue;
        }
        // The copies: the references of `x` from the first copy into `r` on.
        let first_copy = rx
            .iter()
            .position(|&k| copy_of(&prog.insts[k as usize], x) == Some((r, delta)))
            .expect("the last reference is one");
        let copies = &rx[first_copy..];
        if copies
            .iter()
            .any(|&k| copy_of(&prog.insts[k as usize], x) != Some((r, delta)))
        {
            continue;
        }
        // The first reference writes `x` without reading it; no write is `WE_all`.
        let fi = &prog.insts[f as usize];
        if fi.dst.vreg() != Some(x) || fi.srcs.iter().any(|s| s.vreg() == Some(x)) {
            continue;
        }
        if rx[..first_copy].iter().any(|&k| {
            let i = &prog.insts[k as usize];
            i.we_all && i.dst.vreg() == Some(x)
        }) {
            continue;
        }
        if !covers(prog, copies, part) {
            continue;
        }
        let (f, last) = (f as usize, last as usize);
        let start = (while_do.min(f, last) as usize).min(f);
        let shallowest = depth.min(start, last);
        if copies
            .iter()
            .any(|&k| depth.min(k as usize, k as usize) != shallowest)
            || (jump_do.min(start, last) as usize) < start
        {
            continue;
        }
        // `r`'s references in the range are the copies or (for a part) touch no byte of
        // it, and no other register took this range of `r`'s bytes this round.
        let rr = &refs[r as usize];
        let inside = &rr[rr.partition_point(|&k| (k as usize) < start)
            ..rr.partition_point(|&k| (k as usize) <= last)];
        let claim = Claim {
            from: start as u32,
            to: last as u32,
            bytes: part,
        };
        if inside.iter().any(|k| {
            copies.binary_search(k).is_err()
                && (whole || touches(&prog.insts[*k as usize], r, part))
        }) || claims[r as usize].iter().any(|c| c.overlaps(&claim))
        {
            continue;
        }
        claims[r as usize].push(claim);
        gone[x as usize] = true;
        rename.push((x, r, at, copies.to_vec()));
    }
    if rename.is_empty() {
        return false;
    }
    let mut dead = vec![false; n];
    let mut to = vec![(NONE, 0); nv];
    for (x, r, at, copies) in &rename {
        to[*x as usize] = (*r, *at);
        for &k in copies {
            dead[k as usize] = true;
        }
    }
    for i in &mut prog.insts {
        for o in std::iter::once(&mut i.dst).chain(i.srcs.iter_mut()) {
            if let Base::V(v) = o.base {
                let (r, at) = to[v as usize];
                if r != NONE {
                    o.base = Base::V(r);
                    o.off += at;
                }
            }
        }
    }
    super::remove_marked(&mut prog.insts, &dead);
    debug_assert!(rename
        .iter()
        .all(|(x, ..)| !prog.insts.iter().any(|i| refs_vreg(i, *x))));
    true
}

/// Instructions `from..=to` reference the target's bytes `bytes.0..bytes.1` for a renamed
/// register.
#[derive(Clone, Copy)]
struct Claim {
    from: u32,
    to: u32,
    bytes: (u32, u32),
}

impl Claim {
    fn overlaps(&self, o: &Claim) -> bool {
        self.from <= o.to
            && o.from <= self.to
            && self.bytes.0 < o.bytes.1
            && o.bytes.0 < self.bytes.1
    }
}

/// Whether `i` may reference bytes `part` of register `r`: an ALU or math operand's bytes
/// are its region's; any other instruction takes its registers whole.
fn touches(i: &LInst, r: u32, part: (u32, u32)) -> bool {
    let alu = i.op.has_regioned_operands();
    std::iter::once(&i.dst).chain(i.srcs.iter()).any(|o| {
        o.vreg() == Some(r)
            && (!alu || {
                let a = o.off;
                let b = a + o.span(u32::from(i.exec));
                a < part.1 && part.0 < b
            })
    })
}

/// `Some((r, delta))` when `i` is a plain copy of `x` into register `r` (see
/// [`byte_copy`]) that runs on the block's channels (not `WE_all`).
fn copy_of(i: &LInst, x: u32) -> Option<(u32, i64)> {
    let (s, delta) = byte_copy(i)?;
    (s == x && !i.we_all).then_some((i.dst.vreg()?, delta))
}

/// Whether the copies' destinations (contiguous regions) write every byte of `part` (from, to).
fn covers(prog: &Program, copies: &[u32], part: (u32, u32)) -> bool {
    let mut spans: Vec<(u32, u32)> = Vec::with_capacity(copies.len());
    for &k in copies {
        let i = &prog.insts[k as usize];
        if i.dst.stride != 1 {
            return false;
        }
        spans.push((i.dst.off, i.dst.off + i.dst.span(u32::from(i.exec))));
    }
    spans.sort_unstable();
    let mut end = part.0;
    for (a, b) in spans {
        if a > end {
            return false;
        }
        end = end.max(b);
    }
    end >= part.1
}
