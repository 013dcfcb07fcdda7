//! Shared helpers of the EU tests: a deterministic RNG, edge values per type, program
//! building through the ISA crate's encoder, and a recording message port.
#![allow(dead_code)]

use ferrite_isa::{
    Dst, ExecSize, Gen, Instruction, Operands, RegSrc, Region, SendDesc, Sfid, Type,
};
use kernel_iface::gpu::eu::{Kernel, Message, MessagePort, SendOutcome, ThreadState, ThreadStatus};

/// xorshift64*: small, deterministic.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Interesting raw values of a type (NaN, infinities, denormals, -0, extremes).
pub fn edges(ty: Type) -> Vec<u64> {
    match ty {
        Type::F => [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            1e-40,
            -1e-40,
            2147483648.0,
            -2147483904.0,
            4294967296.0,
            65504.0,
            1e30,
            0.999_999_94,
        ]
        .iter()
        .map(|f| f.to_bits() as u64)
        .collect(),
        Type::DF => [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.5,
            -3.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
            1e-310,
            -1e-310,
            9.3e18,
            -9.3e18,
            4294967296.5,
        ]
        .iter()
        .map(|f| f.to_bits())
        .collect(),
        Type::HF => vec![
            0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0x0001, 0x8001, 0x0400,
            0x3800, 0x4100,
        ],
        Type::D => [
            0i32,
            1,
            -1,
            i32::MIN,
            i32::MAX,
            2,
            -2,
            31,
            32,
            0x7FFF,
            -0x8000,
        ]
        .iter()
        .map(|v| *v as u32 as u64)
        .collect(),
        Type::UD => vec![
            0,
            1,
            0xFFFF_FFFF,
            0x8000_0000,
            0x7FFF_FFFF,
            31,
            32,
            33,
            0xFFFF,
        ],
        Type::W => [0i16, 1, -1, i16::MIN, i16::MAX, 15, 16]
            .iter()
            .map(|v| *v as u16 as u64)
            .collect(),
        Type::UW => vec![0, 1, 0xFFFF, 0x8000, 0x7FFF, 255, 256],
        Type::B => vec![0, 1, 0xFF, 0x80, 0x7F],
        Type::UB => vec![0, 1, 0xFF, 0x80, 0x7F],
        Type::Q => [0i64, 1, -1, i64::MIN, i64::MAX, 1 << 32, -(1 << 40)]
            .iter()
            .map(|v| *v as u64)
            .collect(),
        Type::UQ => vec![0, 1, u64::MAX, 1 << 63, u32::MAX as u64, 1 << 32],
        _ => vec![0],
    }
}

/// A random raw value of `ty`: 1 in 4 an edge value, else random bits (floats: mostly
/// moderate magnitudes so arithmetic is exercised, not only overflow).
pub fn value(rng: &mut Rng, ty: Type) -> u64 {
    let e = edges(ty);
    if rng.below(4) == 0 {
        return e[rng.below(e.len() as u64) as usize];
    }
    let r = rng.next();
    match ty {
        Type::F => {
            if rng.below(2) == 0 {
                let m = (r as u32 as f32 / u32::MAX as f32 - 0.5)
                    * 2f32.powi((r >> 40) as i32 % 24 - 8);
                m.to_bits() as u64
            } else {
                r & 0xFFFF_FFFF
            }
        }
        Type::DF => {
            if rng.below(2) == 0 {
                let m = (r as u32 as f64 / u32::MAX as f64 - 0.5)
                    * 2f64.powi((r >> 40) as i32 % 60 - 20);
                m.to_bits()
            } else {
                r
            }
        }
        t => r & size_mask(t),
    }
}

pub fn size_mask(t: Type) -> u64 {
    match t.size() {
        8 => u64::MAX,
        n => (1u64 << (8 * n)) - 1,
    }
}

/// `<w,w,1>` with the widest width that keeps one row in a GRF.
pub fn packed_region(ty: Type, exec: u32) -> Region {
    let w = exec.min(16).min(32 / ty.size()) as u8;
    Region::new(w, w, 1)
}

pub fn grf_src(nr: u8, ty: Type, exec: u32) -> RegSrc {
    RegSrc::grf(nr, 0, ty, packed_region(ty, exec))
}

pub fn exec_size(n: u32) -> ExecSize {
    ExecSize::new(n).expect("valid exec size")
}

/// `send(8) null g127 0x02000010 EOT` to the thread spawner.
pub fn eot() -> Instruction {
    let mut i = Instruction::new(
        ferrite_isa::Opcode::Send,
        ExecSize::S8,
        Operands::Send {
            sfid: Sfid::ThreadSpawner,
            eot: true,
            dst: Dst::null(Type::UD),
            src0: RegSrc::grf(127, 0, Type::UD, Region::SCALAR),
            desc: SendDesc::Imm(0x0200_0010),
            ex_desc_31_28: 0,
        },
    );
    i.we_all = true;
    i
}

/// Encodes `insts` with the ISA crate (compacting when `compact`) and decodes the result
/// as the EU does.
pub fn kernel(insts: &[Instruction], compact: bool) -> Kernel {
    let bytes = ferrite_isa::encode_program(insts, Gen::Gen9, compact)
        .unwrap_or_else(|e| panic!("encode failed: {e}\n{insts:#?}"));
    Kernel::decode(&bytes, Gen::Gen9).unwrap_or_else(|e| panic!("decode failed: {e}"))
}

/// A message recorded by [`TestPort`].
#[derive(Clone, Debug)]
pub struct Msg {
    pub sfid: u8,
    pub desc: u32,
    pub ex_desc: u32,
    pub exec_size: u32,
    pub exec_mask: u32,
    pub payload: Vec<u8>,
}

/// Records messages; EOT on SFID 7, barrier on gateway desc 4, else fills the response
/// with `fill` for enabled lanes (dword per lane).
#[derive(Default)]
pub struct TestPort {
    pub msgs: Vec<Msg>,
    pub fill: u32,
}

impl MessagePort for TestPort {
    fn send(&mut self, m: Message<'_>) -> Result<SendOutcome, String> {
        let Message {
            sfid,
            desc,
            ex_desc,
            exec_size,
            exec_mask,
            payload,
            response,
        } = m;
        self.msgs.push(Msg {
            sfid,
            desc,
            ex_desc,
            exec_size,
            exec_mask,
            payload: payload.to_vec(),
        });
        match sfid {
            7 => Ok(SendOutcome::Eot),
            3 if desc & 7 == 4 => Ok(SendOutcome::Barrier),
            0xF => Err("test fault".into()),
            _ => {
                for k in 0..exec_size as usize {
                    if exec_mask >> k & 1 != 0 && 4 * k + 4 <= response.len() {
                        let v = self.fill.wrapping_add(k as u32);
                        response[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
                Ok(SendOutcome::Done)
            }
        }
    }
}

/// Runs `t` to the end with a generous budget; panics unless it ends with EOT.
pub fn run_to_eot(t: &mut ThreadState, k: &Kernel, port: &mut TestPort) {
    let mut budget = 1_000_000;
    let st = t.run(k, port, &mut budget);
    assert_eq!(st, ThreadStatus::Eot, "thread did not end with EOT");
}

pub fn put(t: &mut ThreadState, byte: usize, sz: usize, v: u64) {
    t.grf_bytes_mut()[byte..byte + sz].copy_from_slice(&v.to_le_bytes()[..sz]);
}

pub fn get(t: &ThreadState, byte: usize, sz: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..sz].copy_from_slice(&t.grf_bytes()[byte..byte + sz]);
    u64::from_le_bytes(b)
}

/// Whether the full sweep (`FERRITE_SIM_SWEEP=1`, scripts/sim-sweep) was requested.
pub fn sweep() -> bool {
    std::env::var("FERRITE_SIM_SWEEP").is_ok_and(|v| v == "1")
}
