//! Dead control flow: `if`s on constant conditions, empty `if`s, code after jumps (and
//! after an `if` both arms of which leave the loop), a `continue` that ends a loop body,
//! and one-trip loops (a body that never continues nor reaches its end): the front end's
//! switches, inlined calls and early returns (src/frontend/cfg.rs). A one-trip loop with
//! several `break`s becomes `if`s: the code after an `if` one arm of which always leaves
//! moves into the other arm, and the `break` arguments become the `if`s' results.

use super::opt::apply_subst;
use crate::hash::HashMap;
use crate::ir::*;

fn count_exits(b: &Block, depth: u32, n: &mut u32) {
    for x in b {
        match x {
            Node::Break(_) | Node::Continue(_) if depth == 0 => *n += 1,
            Node::If(i) => {
                count_exits(&i.then_, depth, n);
                count_exits(&i.else_, depth, n);
            }
            Node::Loop(l) => count_exits(&l.body, depth + 1, n),
            _ => {}
        }
    }
}

/// Every path through `b` ends in a `break` or `continue` of the enclosing loop.
fn always_exits(b: &Block) -> bool {
    b.iter().any(|n| match n {
        Node::Break(_) | Node::Continue(_) => true,
        Node::If(i) => always_exits(&i.then_) && always_exits(&i.else_),
        _ => false,
    })
}

fn has_exit(b: &Block) -> bool {
    let mut n = 0;
    count_exits(b, 0, &mut n);
    n > 0
}

/// What a one-trip loop body is rewritten with: the loop's result types, the function's
/// value types (for the new `if` results) and the renamings of `if` results whose uses move
/// into an arm.
struct Flatten<'a> {
    results: &'a [Type],
    values: &'a mut Vec<Type>,
    subst: HashMap<Value, Value>,
}

impl Flatten<'_> {
    /// `nodes` (part of a loop body) as a block that ends in `yield` of the loop's results
    /// on every path, or None where a path continues or reaches the end (the loop would
    /// run again).
    fn block(&mut self, nodes: Block) -> Option<Block> {
        let mut out = Vec::with_capacity(nodes.len());
        let mut it = nodes.into_iter();
        while let Some(n) = it.next() {
            match n {
                Node::Break(v) => {
                    out.push(Node::Yield(v));
                    return Some(out);
                }
                Node::Continue(_) => return None,
                Node::If(i) if has_exit(&i.then_) || has_exit(&i.else_) => {
                    let rest: Block = it.collect();
                    let If {
                        cond,
                        then_,
                        else_,
                        results,
                    } = *i;
                    // The code after the `if` moves into the arm that may fall through (at
                    // most one: it is not copied).
                    let (then_, else_) = if always_exits(&then_) {
                        let t = self.block(then_)?;
                        let e = self.join(else_, &results, rest);
                        (t, self.block(e)?)
                    } else if always_exits(&else_) {
                        let e = self.block(else_)?;
                        let t = self.join(then_, &results, rest);
                        (self.block(t)?, e)
                    } else {
                        return None;
                    };
                    let fresh: Vec<Value> = self
                        .results
                        .iter()
                        .map(|t| {
                            self.values.push(*t);
                            Value(self.values.len() as u32 - 1)
                        })
                        .collect();
                    out.push(Node::If(Box::new(If {
                        cond,
                        then_,
                        else_,
                        results: fresh.clone(),
                    })));
                    out.push(Node::Yield(fresh));
                    return Some(out);
                }
                other => out.push(other),
            }
        }
        None
    }

    /// An `if` arm followed by the code after the `if`, which reads the arm's yielded
    /// values for the `if`'s `results`.
    fn join(&mut self, mut arm: Block, results: &[Value], rest: Block) -> Block {
        if let Some(Node::Yield(y)) = arm.last() {
            for (r, v) in results.iter().zip(y) {
                self.subst.insert(*r, *v);
            }
            arm.pop();
        }
        arm.extend(rest);
        arm
    }
}

/// A loop without parameters whose body never continues nor reaches its end, as the
/// body's code with `if`s for its `break`s, and the loop results' values; None if it is
/// not such a loop.
fn flatten_one_trip(l: &Loop, values: &mut Vec<Type>) -> Option<(Block, HashMap<Value, Value>)> {
    if !l.params.is_empty() {
        return None;
    }
    let types: Vec<Type> = l.results.iter().map(|r| values[r.0 as usize]).collect();
    let n = values.len();
    let mut fl = Flatten {
        results: &types,
        values,
        subst: HashMap::default(),
    };
    let flat = fl.block(l.body.clone());
    let mut subst = fl.subst;
    let Some(mut body) = flat else {
        values.truncate(n);
        return None;
    };
    let Some(Node::Yield(y)) = body.pop() else {
        unreachable!("a flattened block ends in a yield")
    };
    for (r, v) in l.results.iter().zip(y) {
        subst.insert(*r, v);
    }
    Some((body, subst))
}

fn walk(
    b: &mut Block,
    consts: &Consts,
    values: &mut Vec<Type>,
    subst: &mut HashMap<Value, Value>,
    changed: &mut bool,
) {
    let old = std::mem::take(b);
    // The rebuilt block is at least as long as the old one unless nodes are dropped: one
    // allocation instead of a doubling series (a long block's copies dominated the pass).
    b.reserve(old.len());
    for n in old {
        // After a jump nothing runs; after an `if` that leaves the loop on both arms
        // nothing runs either, but a jump there stays (a loop with parameters must end its
        // body with one; a loop without them drops it below).
        let dead = match b.last() {
            Some(x @ Node::If(_)) => leaves(x) && !n.is_jump(),
            Some(x) => x.is_jump(),
            None => false,
        };
        if dead {
            *changed = true;
            continue;
        }
        match n {
            Node::If(mut i) => {
                walk(&mut i.then_, consts, values, subst, changed);
                walk(&mut i.else_, consts, values, subst, changed);
                let cond = subst.get(&i.cond).copied().unwrap_or(i.cond);
                if let Some(c) = consts.splat(cond) {
                    *changed = true;
                    let mut arm = if c != 0 { i.then_ } else { i.else_ };
                    if let Some(Node::Yield(y)) = arm.last() {
                        for (r, v) in i.results.iter().zip(y.clone()) {
                            subst.insert(*r, v);
                        }
                        arm.pop();
                    }
                    b.extend(arm);
                    continue;
                }
                if i.then_.is_empty() && i.else_.is_empty() && i.results.is_empty() {
                    *changed = true;
                    continue;
                }
                b.push(Node::If(i));
            }
            Node::Loop(mut l) => {
                walk(&mut l.body, consts, values, subst, changed);
                if l.params.is_empty() && drop_final_jumps(&mut l.body) {
                    *changed = true;
                }
                let mut exits = 0;
                count_exits(&l.body, 0, &mut exits);
                let one_trip = l.params.is_empty()
                    && exits == 1
                    && matches!(l.body.last(), Some(Node::Break(_)));
                if one_trip {
                    *changed = true;
                    let Some(Node::Break(args)) = l.body.pop() else {
                        unreachable!()
                    };
                    for (r, v) in l.results.iter().zip(args) {
                        subst.insert(*r, v);
                    }
                    b.extend(l.body);
                    continue;
                }
                if exits > 1 {
                    if let Some((body, s)) = flatten_one_trip(&l, values) {
                        *changed = true;
                        subst.extend(s);
                        b.extend(body);
                        continue;
                    }
                }
                b.push(Node::Loop(l));
            }
            other => b.push(other),
        }
    }
}

/// Control never falls through past `n`: a jump, or an `if` both arms of which leave the
/// loop.
fn leaves(n: &Node) -> bool {
    match n {
        Node::If(i) => always_exits(&i.then_) && always_exits(&i.else_),
        n => n.is_jump(),
    }
}

/// In the body of a loop without parameters (which may fall off its end): a jump after an
/// `if` that leaves the loop on both arms never runs, and a `continue` that ends the body,
/// or an arm of the `if` that ends it, is what falling off the end does. Both are dropped,
/// so `if c { continue } else { break }; break` becomes `if c {} else { break }`, a
/// conditional break. Returns true if anything was dropped.
fn drop_final_jumps(body: &mut Block) -> bool {
    let n = body.len();
    if n >= 2 && body[n - 1].is_jump() && leaves(&body[n - 2]) {
        body.pop();
        drop_final_jumps(body);
        return true;
    }
    let is_continue = |b: &Block| matches!(b.last(), Some(Node::Continue(v)) if v.is_empty());
    if is_continue(body) {
        body.pop();
        return true;
    }
    let Some(Node::If(i)) = body.last_mut() else {
        return false;
    };
    let mut dropped = false;
    for arm in [&mut i.then_, &mut i.else_] {
        if is_continue(arm) {
            arm.pop();
            dropped = true;
        }
    }
    dropped
}

/// Removes dead control flow. Returns true if anything changed.
pub fn opt_dead_cf(f: &mut Function) -> bool {
    let consts = f.consts();
    let mut subst = HashMap::default();
    let mut changed = false;
    let mut body = std::mem::take(&mut f.body);
    walk(&mut body, &consts, &mut f.values, &mut subst, &mut changed);
    f.body = body;
    apply_subst(f, &subst);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    /// `if c { continue } else { break }` ending a loop body (the front end's `if (!elect)
    /// continue; else break;`): the code after it is dead and the `continue` is the body's
    /// end, so a conditional break remains.
    #[test]
    fn final_continue_and_code_after_leaving_if_are_dropped() {
        check_pass(
            opt_dead_cf,
            "%0:i32 = sysval local_invocation_index
            loop {
                store ssbo[0] %0, %0 align 4
                %1:b32 = subgroup_elect
                %2:b32 = inot %1
                if %2 {
                    continue
                } else {
                    break
                }
                break
            }",
            "%0:i32 = sysval local_invocation_index
            loop {
                store ssbo[0] %0, %0 align 4
                %1:b32 = subgroup_elect
                %2:b32 = inot %1
                if %2 {
                } else {
                    break
                }
            }",
        );
    }

    /// A loop with parameters must end its body with a jump: the one after an `if` that
    /// leaves on both arms stays, and so does a `continue` with arguments.
    #[test]
    fn loop_with_parameters_keeps_its_final_jump() {
        let text = "%0:i32 = sysval local_invocation_index
            %1:i32 = const 1
            %2:i32 = loop (%3:i32 = %0) {
                %4:i32 = ushr %3, %1
                %5:b32 = ine %4, %1
                if %5 {
                    continue %4
                } else {
                    break %4
                }
                break %4
            }
            store ssbo[0] %0, %2 align 4";
        check_pass(opt_dead_cf, text, text);
    }

    #[test]
    fn constant_if_keeps_taken_arm() {
        check_pass(
            opt_dead_cf,
            "%0:b1 = const false
            %1:i32 = const 1
            %2:i32 = if %0 {
                yield %1
            } else {
                %3:i32 = iadd %1, %1
                yield %3
            }
            store ssbo[0] %1, %2 align 4",
            "%0:b1 = const false
            %1:i32 = const 1
            %3:i32 = iadd %1, %1
            store ssbo[0] %1, %3 align 4",
        );
    }

    #[test]
    fn one_trip_loop_is_flattened_but_real_loop_kept() {
        check_pass(
            opt_dead_cf,
            "%0:i32 = const 1
            %1:i32 = loop {
                %2:i32 = iadd %0, %0
                break %2
            }
            store ssbo[0] %0, %1 align 4
            %3:i32 = sysval local_invocation_index
            loop {
                store ssbo[0] %0, %0 align 4
                break
            }",
            "%0:i32 = const 1
            %2:i32 = iadd %0, %0
            store ssbo[0] %0, %2 align 4
            %3:i32 = sysval local_invocation_index
            store ssbo[0] %0, %0 align 4",
        );
    }

    #[test]
    fn one_trip_loop_with_conditional_break_becomes_if() {
        check_pass(
            opt_dead_cf,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            loop {
                %2:b1 = ieq %0, %1
                if %2 {
                    break
                }
                store ssbo[0] %0, %0 align 4
                break
            }",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:b1 = ieq %0, %1
            if %2 {
                yield
            } else {
                store ssbo[0] %0, %0 align 4
                yield
            }",
        );
    }

    #[test]
    fn break_values_of_a_one_trip_loop_become_if_results() {
        // A switch's shape: a case that leaves with a value, an `if` with a result before
        // the last `break`, whose uses move into the arm that falls through.
        check_pass(
            opt_dead_cf,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = const 1
            %3:i32 = loop {
                %4:b1 = ieq %0, %1
                if %4 {
                    break %2
                }
                %5:i32 = if %4 {
                    yield %1
                } else {
                    yield %2
                }
                %6:i32 = iadd %5, %2
                break %6
            }
            store ssbo[0] %0, %3 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = const 1
            %4:b1 = ieq %0, %1
            %7:i32 = if %4 {
                yield %2
            } else {
                %5:i32 = if %4 {
                    yield %1
                } else {
                    yield %2
                }
                %6:i32 = iadd %5, %2
                yield %6
            }
            store ssbo[0] %0, %7 align 4",
        );
    }

    #[test]
    fn loop_that_may_run_again_is_kept() {
        // One path reaches the end of the body (the loop continues), one continues (the
        // `continue` ending the body is dropped: falling off the end is the same).
        let once = "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            loop {
                %2:b1 = ieq %0, %1
                if %2 {
                    break
                }
                store ssbo[0] %0, %0 align 4
                if %2 {
                    break
                }
            }";
        check_pass(opt_dead_cf, once, once);
        check_pass(
            opt_dead_cf,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            loop {
                %2:b1 = ieq %0, %1
                if %2 {
                    break
                } else {
                    continue
                }
            }",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            loop {
                %2:b1 = ieq %0, %1
                if %2 {
                    break
                }
            }",
        );
    }
}
