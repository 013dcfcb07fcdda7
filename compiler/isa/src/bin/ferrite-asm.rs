//! `ferrite-asm --gen 9 IN.asm -o OUT.bin [--validate]`: Mesa-syntax assembly to raw
//! little-endian instruction bytes (native, or compacted where the text says so).

use ferrite_isa::{asm, cli, validate, Gen};
use std::process::ExitCode;

fn run() -> Result<(), String> {
    let a = cli::parse_args(std::env::args().skip(1), &[])?;
    if let Some(f) = a.flags.first() {
        return Err(format!(
            "unknown option {f}\nusage: ferrite-asm --gen 9 IN.asm -o OUT.bin [--validate]"
        ));
    }
    let gen = a.gen.unwrap_or(Gen::Gen9);
    let [input] = a.inputs.as_slice() else {
        return Err("usage: ferrite-asm --gen 9 IN.asm -o OUT.bin [--validate]".into());
    };
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
        let v = validate::validate_program_at(&list, &offsets, off, gen);
        if !v.is_empty() {
            let mut msg = format!("{input}: {} validation error(s)\n", v.len());
            for x in &v {
                let at = &insts[x.index];
                msg.push_str(&format!("{input}:{}:{}: {x}\n", at.line, at.col));
            }
            return Err(msg);
        }
    }
    match &a.output {
        Some(o) => std::fs::write(o, &bytes).map_err(|e| format!("{o}: {e}"))?,
        None => return Err("missing -o OUT.bin".into()),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferrite-asm: {}", e.trim_end());
            ExitCode::FAILURE
        }
    }
}
