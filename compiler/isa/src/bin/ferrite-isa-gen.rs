//! `ferrite-isa-gen --gen 9 --count N --seed S --kind all|alu|basic|three|send|branch|compact --out DIR`
//!
//! The hook for `scripts/isa-crosscheck`: writes N random valid instructions as
//! * `DIR/native.bin` (16 bytes each) and `DIR/native.asm` (Ferrite's disassembly, one
//!   instruction per line, branch offsets as numbers),
//! * `DIR/compacted.bin` (each instruction compacted where a compact form exists, else
//!   native) and `DIR/compacted.asm`,
//! * `DIR/native.hex` (one instruction per line as four little-endian dwords
//!   `0x........`, the input format of `intel-gen4disasm`).
//!
//! Another disassembler's output for the `.bin` files can then be diffed against the `.asm`.

use ferrite_isa::compact::{compact_u128, precompact};
use ferrite_isa::random::{self, Rng};
use ferrite_isa::{cli, codec, disasm, Gen, Instruction};
use std::fmt::Write;
use std::process::ExitCode;

fn gen_one(r: &mut Rng, kind: &str, gen: Gen) -> Result<Instruction, String> {
    Ok(match kind {
        "all" => random::instruction(r, gen),
        "alu" => random::simple_alu(r),
        "basic" => random::basic(r),
        "three" => random::three_src(r),
        "send" => random::send(r, gen),
        "branch" => random::branch(r),
        "compact" => random::compactable(r, gen),
        k => return Err(format!("unknown --kind {k}")),
    })
}

fn run() -> Result<(), String> {
    let a = cli::parse_args(
        std::env::args().skip(1),
        &["--count", "--seed", "--kind", "--out"],
    )?;
    let get = |k: &str| {
        a.extra
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    let gen = a.gen.unwrap_or(Gen::Gen9);
    let count: usize = get("--count")
        .unwrap_or("1000")
        .parse()
        .map_err(|_| "bad --count")?;
    let seed: u64 = get("--seed")
        .unwrap_or("1")
        .parse()
        .map_err(|_| "bad --seed")?;
    let kind = get("--kind").unwrap_or("all");
    let out = get("--out").ok_or("missing --out DIR")?;
    std::fs::create_dir_all(out).map_err(|e| format!("{out}: {e}"))?;
    let mut r = Rng::new(seed);
    let (mut nbin, mut nasm, mut hex) = (Vec::new(), String::new(), String::new());
    let (mut cbin, mut casm) = (Vec::new(), String::new());
    let mut compacted = 0;
    for _ in 0..count {
        let inst = gen_one(&mut r, kind, gen)?;
        let w = codec::encode_u128(&inst, gen).map_err(|e| e.to_string())?;
        nbin.extend_from_slice(&w.to_le_bytes());
        let _ = writeln!(nasm, "{}", disasm::format_instruction(&inst, None, false));
        let _ = writeln!(hex, "{}", cli::hex_dwords(w));
        let p = precompact(&inst);
        let pw = codec::encode_u128(&p, gen).map_err(|e| e.to_string())?;
        match compact_u128(w, gen)
            .map(|c| (c, inst))
            .or_else(|| compact_u128(pw, gen).map(|c| (c, p)))
        {
            Some((c, i)) => {
                compacted += 1;
                cbin.extend_from_slice(&c.to_le_bytes());
                let _ = writeln!(casm, "{}", disasm::format_instruction(&i, None, true));
            }
            None => {
                cbin.extend_from_slice(&w.to_le_bytes());
                let _ = writeln!(casm, "{}", disasm::format_instruction(&inst, None, false));
            }
        }
    }
    let write = |name: &str, data: &[u8]| {
        let p = format!("{out}/{name}");
        std::fs::write(&p, data).map_err(|e| format!("{p}: {e}"))
    };
    write("native.bin", &nbin)?;
    write("native.asm", nasm.as_bytes())?;
    write("native.hex", hex.as_bytes())?;
    write("compacted.bin", &cbin)?;
    write("compacted.asm", casm.as_bytes())?;
    eprintln!("ferrite-isa-gen: {count} instructions ({compacted} compacted) in {out}");
    Ok(())
}

fn main() -> ExitCode {
    cli::exit("ferrite-isa-gen", run())
}
