//! Dead control flow: `if`s on constant conditions, empty `if`s, code after jumps, and
//! one-trip loops (a body that always ends in its only `break`).

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

fn walk(b: &mut Block, consts: &Consts, subst: &mut HashMap<Value, Value>, changed: &mut bool) {
    let old = std::mem::take(b);
    // The rebuilt block is at least as long as the old one unless nodes are dropped: one
    // allocation instead of a doubling series (a long block's copies dominated the pass).
    b.reserve(old.len());
    for n in old {
        if b.last().is_some_and(|x: &Node| x.is_jump()) {
            *changed = true;
            continue;
        }
        match n {
            Node::If(mut i) => {
                walk(&mut i.then_, consts, subst, changed);
                walk(&mut i.else_, consts, subst, changed);
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
                walk(&mut l.body, consts, subst, changed);
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
                b.push(Node::Loop(l));
            }
            other => b.push(other),
        }
    }
}

/// Removes dead control flow. Returns true if anything changed.
pub fn opt_dead_cf(f: &mut Function) -> bool {
    let consts = f.consts();
    let mut subst = HashMap::default();
    let mut changed = false;
    let mut body = std::mem::take(&mut f.body);
    walk(&mut body, &consts, &mut subst, &mut changed);
    f.body = body;
    apply_subst(f, &subst);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

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
    fn loop_with_conditional_break_is_kept() {
        let text = "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            loop {
                %2:b1 = ieq %0, %1
                if %2 {
                    break
                }
                store ssbo[0] %0, %0 align 4
                break
            }";
        check_pass(opt_dead_cf, text, text);
    }
}
