//! `ferrite-disasm --gen 9 IN.bin [--hex] [--validate]`: raw instruction bytes (or, with
//! `--hex`, hex text as in Mesa's `.expected` files) to Mesa-syntax text on stdout.

use ferrite_isa::{cli, decode_program, disasm, validate, Gen};
use std::io::Write;
use std::process::ExitCode;

fn run() -> Result<(), String> {
    let usage = "usage: ferrite-disasm --gen 9 IN.bin [--hex] [--validate]";
    let a = cli::parse_args(std::env::args().skip(1), &[])?;
    if let Some(f) = a.flags.first() {
        return Err(format!("unknown option {f}\n{usage}"));
    }
    let gen = a.gen.unwrap_or(Gen::Gen9);
    let [input] = a.inputs.as_slice() else {
        return Err(usage.into());
    };
    let raw = std::fs::read(input).map_err(|e| format!("{input}: {e}"))?;
    let bytes = if a.hex {
        cli::parse_hex(&String::from_utf8_lossy(&raw)).map_err(|e| format!("{input}:{e}"))?
    } else {
        raw
    };
    let prog = decode_program(&bytes, gen).map_err(|e| format!("{input}: {e}"))?;
    let text = disasm::format_program(&prog);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is not an error worth a message.
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(format!("stdout: {e}"));
        }
    }
    if a.validate {
        let insts: Vec<_> = prog.iter().map(|p| p.inst).collect();
        let offsets: Vec<_> = prog.iter().map(|p| p.offset).collect();
        let v = validate::validate_program_at(&insts, &offsets, bytes.len(), gen);
        if !v.is_empty() {
            let mut msg = format!("{input}: {} validation error(s)\n", v.len());
            for x in &v {
                msg.push_str(&format!("offset {}: {x}\n", offsets[x.index]));
            }
            return Err(msg);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferrite-disasm: {}", e.trim_end());
            ExitCode::FAILURE
        }
    }
}
