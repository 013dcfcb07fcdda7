//! One EU hardware thread: register state and execution of decoded Gen9 instructions.
//!
//! A [`Kernel`] is decoded once (with the ISA crate) and pre-decoded into [`prep::Op`]s:
//! every direct operand's per-lane byte offsets, expanded immediates, resolved branch
//! targets and the execution domain are computed ahead of time, so [`ThreadState::run`]
//! only loops over lanes. SEND and its kin go to a [`MessagePort`] (the data port, gateway
//! and thread spawner live with the command streamer).
//!
//! SIMD control flow follows the Gen6+ model of the PRM ("Structured control flow"): each
//! channel is either active or waiting for a resume instruction (its per-channel IP). IF,
//! ELSE, BREAK, CONT, HALT and a failing WHILE send channels to wait at their UIP/JIP (BREAK:
//! after the loop's WHILE); a waiting channel becomes active when execution reaches its
//! resume point. A branch instruction that leaves no channel active jumps to its JIP (the
//! next point where channels can resume), so blocks no channel executes are skipped.

mod alu;
mod fast;
mod fp;
mod math;
pub mod prep;
pub mod regs;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use ferrite_isa::{Gen, Instruction, PredCtrl, SendDesc};

pub use fp::{f16_to_f32, f32_to_f16, FpEnv, Rnd};
use prep::{ones, ExDescSrc, Kind, Op, Target};
use regs::*;

/// Errors building a [`Kernel`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EuError {
    #[error("kernel decode failed: {0}")]
    Decode(#[from] ferrite_isa::IsaError),
    #[error("kernel has no instructions")]
    Empty,
}

/// A decoded program, ready to run on any number of threads.
pub struct Kernel {
    insts: Vec<Instruction>,
    offsets: Vec<u32>,
    ops: Vec<Op>,
    /// Bytes of the program that were decoded.
    size: u32,
}

impl Kernel {
    /// Decodes `bytes` (native and compacted instructions). Decoding stops after an EOT
    /// send once no branch seen so far targets a later offset, or at the end of `bytes`.
    pub fn decode(bytes: &[u8], gen: Gen) -> Result<Kernel, EuError> {
        let mut insts = Vec::new();
        let mut offsets = Vec::new();
        let mut off = 0usize;
        let mut max_target = 0i64;
        let mut seen_eot = false;
        while off < bytes.len() {
            if seen_eot && off as i64 > max_target {
                break;
            }
            let (inst, n) = ferrite_isa::decode_at(bytes, off, gen)?;
            if let Some((j, u)) = inst.branch_offsets() {
                max_target = max_target.max(off as i64 + j as i64);
                if let Some(u) = u {
                    max_target = max_target.max(off as i64 + u as i64);
                }
            }
            if is_eot(&inst) {
                seen_eot = true;
            }
            insts.push(inst);
            offsets.push(off as u32);
            off += n;
        }
        Kernel::from_parts(insts, offsets, off as u32)
    }

    /// A kernel from already decoded instructions laid out natively (16 bytes each), as
    /// [`ferrite_isa::encode_program`] takes them without compaction.
    pub fn from_instructions(insts: &[Instruction]) -> Result<Kernel, EuError> {
        let offsets = (0..insts.len() as u32).map(|i| i * 16).collect();
        Kernel::from_parts(insts.to_vec(), offsets, insts.len() as u32 * 16)
    }

    fn from_parts(insts: Vec<Instruction>, offsets: Vec<u32>, end: u32) -> Result<Kernel, EuError> {
        if insts.is_empty() {
            return Err(EuError::Empty);
        }
        let ops = prep::prepare(&insts, &offsets, end);
        Ok(Kernel {
            insts,
            offsets,
            ops,
            size: end,
        })
    }

    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// How many bytes of the program were decoded: the kernel is a function of these bytes
    /// alone.
    pub fn byte_len(&self) -> usize {
        self.size as usize
    }

    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    pub fn instructions(&self) -> &[Instruction] {
        &self.insts
    }

    /// Byte offset of instruction `i` in the program.
    pub fn offset_of(&self, i: usize) -> Option<u32> {
        self.offsets.get(i).copied()
    }
}

fn is_eot(i: &Instruction) -> bool {
    matches!(
        i.operands,
        ferrite_isa::Operands::Send { eot: true, .. }
            | ferrite_isa::Operands::SplitSend { eot: true, .. }
    )
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadStatus {
    /// The thread sent its end-of-thread message.
    Eot,
    /// The thread sent a gateway barrier message; call `run` again once every thread of
    /// the group has arrived (the following `wait n0` is then a no-op).
    Barrier,
    /// The thread cannot continue: illegal instruction, bad operand, message fault, or the
    /// instruction budget ran out.
    Hang(String),
}

/// Result of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    Done,
    Barrier,
    Eot,
}

/// Everything a SEND does outside the EU.
pub trait MessagePort {
    /// Executes one message. Of `m`: `payload` = src0 (mlen GRFs) followed, for split sends, by
    /// src1 (ex_mlen GRFs). `response` = rlen GRFs, **pre-filled with the current contents of
    /// the destination registers**: write only what the message returns, so channels the
    /// message does not return keep their old values. `exec_mask` bit k = lane k of the
    /// instruction (channel `first + k`) is enabled. `desc`/`ex_desc` as encoded (or read
    /// from a0); `ex_desc` includes SFID (bits 3:0) and EOT (bit 5).
    fn send(&mut self, m: Message<'_>) -> Result<SendOutcome, String>;
}

/// One message as an EU hands it to its port ([`MessagePort::send`] says what each part holds).
#[derive(Debug)]
pub struct Message<'a> {
    pub sfid: u8,
    pub desc: u32,
    pub ex_desc: u32,
    /// The SEND's execution size.
    pub exec_size: u32,
    pub exec_mask: u32,
    pub payload: &'a [u8],
    pub response: &'a mut [u8],
}

/// Global bound on trace output lines (all threads together).
static TRACE_LINES: AtomicU64 = AtomicU64::new(0);
/// Maximum number of `simtrace` lines printed per process.
pub const TRACE_LINE_LIMIT: u64 = 20_000;

/// `FERRITE_DEBUG` contains `simtrace` (read once per process).
pub fn simtrace_from_env() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| crate::debug_flag("simtrace"))
}

/// Scratch space of the interpreter, kept across instructions so nothing is allocated or
/// zeroed per instruction.
struct Scratch {
    f: [[f32; 32]; 3],
    d: [[f64; 32]; 3],
    i: [[i128; 32]; 3],
    raw: [u64; 32],
    rf: [f32; 32],
    rd: [f64; 32],
    ri: [i128; 32],
    off: [[u16; 32]; 4],
}

/// One hardware thread.
pub struct ThreadState {
    pub(crate) regs: Box<[u8; REGS_SIZE]>,
    pc: usize,
    simd: u32,
    dispatch: u32,
    /// Channels that are not waiting (before the dispatch mask).
    active: u32,
    waiting: u32,
    resume: [u32; 32],
    finished: bool,
    trace: bool,
    scratch: Option<Box<Scratch>>,
    payload: Vec<u8>,
    response: Vec<u8>,
    /// Instructions executed.
    pub instructions: u64,
    /// Sum over executed instructions of their enabled channels.
    pub lane_instructions: u64,
}

impl ThreadState {
    /// A thread of dispatch width `simd` (8, 16 or 32) whose channels `dispatch_mask` are
    /// enabled (sr0.2). The GRFs are zero; dispatch loads R0 and the CURBE payload.
    pub fn new(simd: u32, dispatch_mask: u32) -> ThreadState {
        let mut t = ThreadState {
            regs: vec![0u8; REGS_SIZE]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| Box::new([0u8; REGS_SIZE])),
            pc: 0,
            simd: 0,
            dispatch: 0,
            active: 0,
            waiting: 0,
            resume: [0; 32],
            finished: false,
            trace: false,
            scratch: Some(Box::new(Scratch {
                f: [[0.0; 32]; 3],
                d: [[0.0; 32]; 3],
                i: [[0; 32]; 3],
                raw: [0; 32],
                rf: [0.0; 32],
                rd: [0.0; 32],
                ri: [0; 32],
                off: [[0; 32]; 4],
            })),
            payload: Vec::new(),
            response: Vec::new(),
            instructions: 0,
            lane_instructions: 0,
        };
        t.reset(simd, dispatch_mask);
        t
    }

    /// Makes this thread a new one, as [`ThreadState::new`] does, keeping its allocations
    /// (dispatch reuses threads from group to group).
    pub fn reset(&mut self, simd: u32, dispatch_mask: u32) {
        let simd = simd.clamp(1, 32);
        let dispatch = dispatch_mask & ones(simd);
        self.regs.fill(0);
        self.pc = 0;
        self.simd = simd;
        self.dispatch = dispatch;
        self.active = u32::MAX;
        self.waiting = 0;
        self.resume = [0; 32];
        self.finished = false;
        self.trace = simtrace_from_env();
        self.instructions = 0;
        self.lane_instructions = 0;
        self.put_u32(SR_OFF + 8, dispatch);
        self.put_u32(SR_OFF + 12, dispatch);
        self.put_u32(CE_OFF, ones(simd));
    }

    /// The 4096 bytes of g0..g127.
    pub fn grf_bytes(&self) -> &[u8] {
        &self.regs[..GRF_SIZE]
    }

    pub fn grf_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.regs[..GRF_SIZE]
    }

    /// One GRF.
    pub fn grf(&self, n: usize) -> &[u8] {
        &self.regs[n * 32..n * 32 + 32]
    }

    /// Enables or disables `simtrace` output for this thread (default: `FERRITE_DEBUG`).
    pub fn set_trace(&mut self, on: bool) {
        self.trace = on;
    }

    /// The dispatch width.
    pub fn simd(&self) -> u32 {
        self.simd
    }

    /// The flag registers f0 (bits 31:0) and f1 (bits 63:32).
    pub fn flags(&self) -> u64 {
        self.get_u64(F_OFF)
    }

    pub fn set_flags(&mut self, v: u64) {
        self.regs[F_OFF..F_OFF + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// cr0.0 (rounding and denormal modes).
    pub fn cr0(&self) -> u32 {
        self.get_u32(CR_OFF)
    }

    pub fn set_cr0(&mut self, v: u32) {
        self.put_u32(CR_OFF, v);
    }

    /// a0 as sixteen words.
    pub fn a0(&self, word: usize) -> u16 {
        u16::from_le_bytes([
            self.regs[A0_OFF + 2 * word],
            self.regs[A0_OFF + 2 * word + 1],
        ])
    }

    /// Accumulator bytes (acc0..acc9, 32 bytes each).
    pub fn acc_bytes(&self) -> &[u8] {
        &self.regs[ACC_OFF..ACC_OFF + 320]
    }

    /// The channels currently enabled (dispatch mask and control flow).
    pub fn exec_mask(&self) -> u32 {
        self.active & self.dispatch
    }

    /// Index of the next instruction.
    pub fn pc(&self) -> usize {
        self.pc
    }

    #[inline]
    fn get_u32(&self, o: usize) -> u32 {
        u32::from_le_bytes([
            self.regs[o],
            self.regs[o + 1],
            self.regs[o + 2],
            self.regs[o + 3],
        ])
    }

    #[inline]
    fn get_u64(&self, o: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.regs[o..o + 8]);
        u64::from_le_bytes(b)
    }

    #[inline]
    fn put_u32(&mut self, o: usize, v: u32) {
        self.regs[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Per-lane predicate bits of `op` (bit k = lane k), all ones without predication.
    fn pred_bits(&self, op: &Op) -> u32 {
        let Some(p) = op.pred else {
            return u32::MAX;
        };
        let n = op.exec;
        let flags = self.flags();
        let fb = |ch: u32| -> bool {
            let b = op.flag_base + ch;
            b < 64 && (flags >> b) & 1 != 0
        };
        let lanes = |f: &dyn Fn(u32) -> bool| -> u32 {
            let mut m = 0;
            for k in 0..n {
                if f(k) {
                    m |= 1 << k;
                }
            }
            m
        };
        let group = |g: u32, any: bool| -> u32 {
            lanes(&|k| {
                let start = op.first + (k / g) * g;
                let bits = (0..g).map(|c| fb(start + c));
                let mut bits = bits;
                if any {
                    bits.any(|b| b)
                } else {
                    bits.all(|b| b)
                }
            })
        };
        let m = match p.ctrl {
            PredCtrl::Normal => {
                let b = op.flag_base + op.first;
                if b >= 64 {
                    0
                } else {
                    ((flags >> b) as u32) & ones(n)
                }
            }
            PredCtrl::AnyV => group(n, true),
            PredCtrl::AllV => group(n, false),
            PredCtrl::Any2h => group(2, true),
            PredCtrl::All2h => group(2, false),
            PredCtrl::Any4h => group(4, true),
            PredCtrl::All4h => group(4, false),
            PredCtrl::Any8h => group(8, true),
            PredCtrl::All8h => group(8, false),
            PredCtrl::Any16h => group(16, true),
            PredCtrl::All16h => group(16, false),
            PredCtrl::Any32h => group(32, true),
            PredCtrl::All32h => group(32, false),
            PredCtrl::X | PredCtrl::Y | PredCtrl::Z | PredCtrl::W => {
                let c = match p.ctrl {
                    PredCtrl::X => 0,
                    PredCtrl::Y => 1,
                    PredCtrl::Z => 2,
                    _ => 3,
                };
                lanes(&|k| fb(op.first + (k & !3) + c))
            }
        };
        if p.inverse {
            !m & ones(n)
        } else {
            m
        }
    }

    /// Channels of `op` enabled by the execution mask (bit k = lane k).
    #[inline]
    fn lane_mask(&self, op: &Op) -> u32 {
        if op.we_all {
            ones(op.exec)
        } else {
            ((self.active & self.dispatch) >> op.first) & ones(op.exec)
        }
    }

    /// Makes the channels waiting for instruction `pc` active.
    fn wake(&mut self, pc: usize) {
        let mut w = self.waiting;
        while w != 0 {
            let c = w.trailing_zeros();
            w &= w - 1;
            if self.resume[c as usize] == pc as u32 {
                self.waiting &= !(1 << c);
                self.active |= 1 << c;
            }
        }
    }

    /// Sends lanes `lanes` (relative to `op.first`) of the active channels to wait at `at`.
    fn park(&mut self, op: &Op, lanes: u32, at: u32) {
        let chans = (lanes as u64) << op.first;
        let chans = (chans as u32) & self.active;
        let mut m = chans;
        while m != 0 {
            let c = m.trailing_zeros();
            m &= m - 1;
            self.resume[c as usize] = at;
        }
        self.active &= !chans;
        self.waiting |= chans;
    }

    fn any_active(&self) -> bool {
        self.active & self.dispatch != 0
    }

    /// Runs until EOT, a barrier, a hang, or `budget` instructions have executed.
    pub fn run(
        &mut self,
        kernel: &Kernel,
        port: &mut dyn MessagePort,
        budget: &mut u64,
    ) -> ThreadStatus {
        if self.finished {
            return ThreadStatus::Eot;
        }
        loop {
            let pc = self.pc;
            let Some(op) = kernel.ops.get(pc) else {
                return ThreadStatus::Hang(format!(
                    "execution ran past the end of the program (instruction {pc})"
                ));
            };
            if *budget == 0 {
                return ThreadStatus::Hang(format!(
                    "instruction budget exhausted at instruction {pc} (offset {:#x}); runaway kernel?",
                    kernel.offsets[pc]
                ));
            }
            *budget -= 1;
            if op.join && self.waiting != 0 {
                self.wake(pc);
            }
            self.instructions += 1;
            let mut next = pc + 1;
            let mut trace_mask = 0u32;
            match &op.kind {
                Kind::Alu(a) => {
                    let mask = self.lane_mask(op);
                    let pred = self.pred_bits(op);
                    // SEL uses its predicate to choose, not to disable channels.
                    let mask = if a.op == prep::AluOp::Sel {
                        mask
                    } else {
                        mask & pred
                    };
                    trace_mask = mask;
                    self.lane_instructions += mask.count_ones() as u64;
                    if mask != 0 || a.dst.is_ip {
                        if a.reads_live_arf {
                            self.refresh_live_arf(kernel, pc, op.first);
                        }
                        if let Err(e) = self.exec_alu(a, op, mask, pred) {
                            return self.hang(kernel, pc, &e);
                        }
                        if a.dst.is_ip && mask & 1 != 0 {
                            // A write to ip is a jump to that byte offset.
                            let target = self.get_u32(IP_OFF) as i64;
                            match kernel.offsets.binary_search(&(target as u32)) {
                                Ok(i) => next = i,
                                Err(_) => {
                                    return self.hang(
                                        kernel,
                                        pc,
                                        &format!("ip written with {target:#x}, not an instruction"),
                                    )
                                }
                            }
                        }
                    }
                }
                Kind::Send(s) => {
                    let mask = self.lane_mask(op) & self.pred_bits(op);
                    trace_mask = mask;
                    self.lane_instructions += mask.count_ones() as u64;
                    if mask != 0 || s.eot {
                        match self.do_send(s, op, mask, port) {
                            Ok(SendOutcome::Done) if !s.eot => {}
                            Ok(SendOutcome::Barrier) if !s.eot => {
                                self.pc = next;
                                self.trace_line(kernel, pc, mask, &[]);
                                return ThreadStatus::Barrier;
                            }
                            Ok(_) => {
                                self.pc = next;
                                self.finished = true;
                                self.trace_line(kernel, pc, mask, &[]);
                                return ThreadStatus::Eot;
                            }
                            Err(e) => return self.hang(kernel, pc, &format!("message fault: {e}")),
                        }
                    }
                }
                Kind::If { jip, .. } => {
                    let mask = self.lane_mask(op);
                    trace_mask = mask;
                    let fail = mask & !self.pred_bits(op);
                    if fail != 0 {
                        let at = match target(jip) {
                            Ok(t) => t,
                            Err(e) => return self.hang(kernel, pc, &e),
                        };
                        self.park(op, fail, at);
                    }
                    if !self.any_active() {
                        match target(jip) {
                            Ok(t) => next = t as usize,
                            Err(e) => return self.hang(kernel, pc, &e),
                        }
                    }
                }
                Kind::Else { jip, uip } => {
                    let mask = self.lane_mask(op);
                    trace_mask = mask;
                    // Channels that ran the then-block wait for the ENDIF (UIP).
                    let at = match target(uip) {
                        Ok(t) => t,
                        Err(e) => return self.hang(kernel, pc, &e),
                    };
                    self.park(op, mask, at);
                    // The else-block's channels resume at the next instruction.
                    if self.waiting != 0 {
                        self.wake(pc + 1);
                    }
                    if !self.any_active() {
                        match target(jip) {
                            Ok(t) => next = t as usize,
                            Err(e) => return self.hang(kernel, pc, &e),
                        }
                    }
                }
                Kind::Endif { jip } => {
                    trace_mask = self.lane_mask(op);
                    if !self.any_active() {
                        if let Ok(t) = target(jip) {
                            next = t as usize;
                        }
                    }
                }
                Kind::While { jip } => {
                    let mask = self.lane_mask(op);
                    trace_mask = mask;
                    let fail = mask & !self.pred_bits(op);
                    if fail != 0 {
                        self.park(op, fail, pc as u32 + 1);
                    }
                    if mask & !fail != 0 && self.any_active() {
                        match target(jip) {
                            Ok(t) => next = t as usize,
                            Err(e) => return self.hang(kernel, pc, &e),
                        }
                    }
                }
                Kind::Break { jip, uip } | Kind::Cont { jip, uip } | Kind::Halt { jip, uip } => {
                    let mask = self.lane_mask(op);
                    trace_mask = mask;
                    let go = mask & self.pred_bits(op);
                    if go != 0 {
                        let at = match (target(uip), &op.kind) {
                            (Ok(t), Kind::Break { .. }) => t + 1,
                            (Ok(t), _) => t,
                            (Err(e), _) => return self.hang(kernel, pc, &e),
                        };
                        self.park(op, go, at);
                    }
                    if !self.any_active() {
                        match target(jip) {
                            Ok(t) => next = t as usize,
                            Err(e) => return self.hang(kernel, pc, &e),
                        }
                    }
                }
                Kind::Jmpi { src } => {
                    // JMPI is scalar: taken if channel 0's predicate holds. The offset counts
                    // from the next instruction (Mesa's Gen4-7 `elk_land_fwd_jump` counts
                    // from jmpi + 1); on Gen8+ in bytes like JIP/UIP (not machine-verified).
                    let taken = self.pred_bits(op) & 1 != 0;
                    trace_mask = taken as u32;
                    if taken {
                        let rel = match &src.imm {
                            Some((v, _)) => v[0] as u32 as i32 as i64,
                            None => self.get_u32(src.off[0] as usize) as i32 as i64,
                        };
                        let here = kernel.offsets[pc] as i64 + insn_size(kernel, pc);
                        let t = here + rel;
                        match kernel.offsets.binary_search(&(t as u32)) {
                            Ok(i) if t >= 0 => next = i,
                            _ => {
                                return self.hang(
                                    kernel,
                                    pc,
                                    &format!("jmpi to {t:#x}, not an instruction"),
                                )
                            }
                        }
                    }
                }
                Kind::Nop | Kind::Wait => {}
                Kind::Illegal(why) => return self.hang(kernel, pc, why),
            }
            if !matches!(op.kind, Kind::Alu(_) | Kind::Send(_)) {
                // Control flow counts the channels it was executed for, like ALU ops.
                self.lane_instructions += trace_mask.count_ones() as u64;
            }
            if self.trace {
                let written = match &op.kind {
                    Kind::Alu(a) if !a.dst.null => dst_regs(&a.dst, op.exec),
                    Kind::Send(s) => s.dst.map(|d| vec![d as usize]).unwrap_or_default(),
                    _ => Vec::new(),
                };
                self.trace_line(kernel, pc, trace_mask, &written);
            }
            self.pc = next;
        }
    }

    fn hang(&mut self, kernel: &Kernel, pc: usize, why: &str) -> ThreadStatus {
        let text = kernel
            .insts
            .get(pc)
            .map(|i| i.to_string())
            .unwrap_or_default();
        ThreadStatus::Hang(format!(
            "instruction {pc} (offset {:#x}) `{}`: {why}",
            kernel.offsets.get(pc).copied().unwrap_or(0),
            text.trim()
        ))
    }

    /// Puts the current values of the registers that change by themselves (ce0, ip, tm0)
    /// into the register space before an instruction reads them.
    ///
    /// ce0 (docs/gen9.md 2.10.1): bit k = channel k enabled by the control flow (`if`,
    /// `else`, loops, `halt`), *without* the dispatch mask: a channel the thread was not
    /// dispatched with never executes, so no instruction disables it, and it reads as
    /// enabled. The reading instruction's channel group shifts the value: an instruction
    /// of group `first` sees channel `first + k` at bit k.
    fn refresh_live_arf(&mut self, kernel: &Kernel, pc: usize, first: u32) {
        let ce = (self.active & ones(self.simd)) >> first;
        self.put_u32(CE_OFF, ce);
        self.put_u32(IP_OFF, kernel.offsets[pc]);
        let t = self.instructions;
        self.put_u32(TM_OFF, t as u32);
        self.put_u32(TM_OFF + 4, (t >> 32) as u32);
    }

    fn do_send(
        &mut self,
        s: &prep::SendOp,
        op: &Op,
        mask: u32,
        port: &mut dyn MessagePort,
    ) -> Result<SendOutcome, String> {
        let desc = match s.desc {
            SendDesc::Imm(d) => d,
            SendDesc::A0 { subnr } => self.get_u32(A0_OFF + subnr as usize),
        };
        let ex_desc = match s.ex_desc {
            ExDescSrc::Imm(x) => x,
            ExDescSrc::A0Dword(dw) => {
                (self.get_u32(A0_OFF + 4 * dw as usize) & !0x3F)
                    | (s.eot as u32) << 5
                    | s.sfid as u32
            }
        };
        let mlen = ((desc >> 25) & 0xF) as usize;
        let rlen = ((desc >> 20) & 0x1F) as usize;
        let ex_mlen = if s.src1.is_some() {
            ((ex_desc >> 6) & 0xF) as usize
        } else {
            0
        };
        let grf_range = |first: usize, n: usize| -> Result<std::ops::Range<usize>, String> {
            if first + n > 128 {
                Err(format!(
                    "message registers g{first}..g{} out of range",
                    first + n
                ))
            } else {
                Ok(first * 32..(first + n) * 32)
            }
        };
        self.payload.clear();
        let r0 = grf_range(s.src0 as usize, mlen)?;
        self.payload.extend_from_slice(&self.regs[r0]);
        if let Some(s1) = s.src1 {
            let r1 = grf_range(s1 as usize, ex_mlen)?;
            self.payload.extend_from_slice(&self.regs[r1]);
        }
        self.response.clear();
        let dst_range = match s.dst {
            Some(d) if rlen > 0 => Some(grf_range(d as usize, rlen)?),
            _ => None,
        };
        match &dst_range {
            Some(r) => self.response.extend_from_slice(&self.regs[r.clone()]),
            None => self.response.resize(rlen * 32, 0),
        }
        let out = port.send(Message {
            sfid: s.sfid,
            desc,
            ex_desc,
            exec_size: op.exec,
            exec_mask: mask,
            payload: &self.payload,
            response: &mut self.response,
        })?;
        if let Some(r) = dst_range {
            self.regs[r].copy_from_slice(&self.response);
        }
        Ok(out)
    }

    fn trace_line(&self, kernel: &Kernel, pc: usize, mask: u32, written: &[usize]) {
        if !self.trace {
            return;
        }
        if TRACE_LINES.fetch_add(1, Ordering::Relaxed) >= TRACE_LINE_LIMIT {
            return;
        }
        let mut s = format!(
            "simtrace {:5} [{:#06x}] mask {:08x}  {}",
            pc,
            kernel.offsets[pc],
            mask,
            kernel.insts[pc].to_string().trim()
        );
        for &r in written.iter().take(4) {
            if r < 128 {
                let _ = write!(s, "\n    g{r:<3} =");
                for d in 0..8 {
                    let _ = write!(s, " {:08x}", self.get_u32(r * 32 + d * 4));
                }
            }
        }
        eprintln!("{s}");
    }
}

fn target(t: &Target) -> Result<u32, String> {
    t.map_err(|off| format!("branch target {off:#x} is not an instruction boundary"))
}

fn insn_size(kernel: &Kernel, pc: usize) -> i64 {
    match kernel.offsets.get(pc + 1) {
        Some(&n) => n as i64 - kernel.offsets[pc] as i64,
        None => 16,
    }
}

/// GRFs a destination touches (for tracing).
fn dst_regs(d: &prep::DstDesc, exec: u32) -> Vec<usize> {
    if d.ind.is_some() {
        return Vec::new();
    }
    let mut v: Vec<usize> = Vec::new();
    for k in 0..exec as usize {
        let r = d.off[k] as usize / 32;
        if r < 128 && !v.contains(&r) {
            v.push(r);
        }
    }
    v
}
