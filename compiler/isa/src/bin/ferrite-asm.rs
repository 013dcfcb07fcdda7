//! `ferrite-asm --gen 9 IN.asm -o OUT.bin [--validate]`: Mesa-syntax assembly to raw
//! little-endian instruction bytes (native, or compacted where the text says so).

use ferrite_isa::{asm, cli, validate, Gen};
use std::process::ExitCode;

fn run() -> Result<(), String> {
    let a = cli::parse_args(std::env::args().skip(1), &[])?;
    let gen = a.gen.unwrap_or(Gen::Gen9);
    let input = a.single_input("usage: ferrite-asm --gen 9 IN.asm -o OUT.bin [--validate]")?;
    let text = std::fs::read_to_string(input).map_err(|e| format!("{input}: {e}"))?;
    let insts = asm::parse_program(&text, gen).map_err(|e| format!("{input}:{e}"))?;
    let bytes = asm::assemble(&text, gen).map_err(|e| format!("{input}:{e}"))?;
    if a.validate {
        let mut offsets = Vec::with_capacity(insts.len());
        let mut off = 0;
        for i in &insts {
            offsets.push(off);
            off += if i.compacted { 8 } else { 16 };
        }
        let list: Vec<_> = insts.iter().map(|i| i.inst).collect();
        let found = validate::validate_program_at(&list, &offsets, off, gen);
        cli::validation_result(input, &found, |k| {
            format!("{input}:{}:{}", insts[k].line, insts[k].col)
        })?;
    }
    match &a.output {
        Some(o) => std::fs::write(o, &bytes).map_err(|e| format!("{o}: {e}"))?,
        None => return Err("missing -o OUT.bin".into()),
    }
    Ok(())
}

fn main() -> ExitCode {
    cli::exit("ferrite-asm", run())
}
