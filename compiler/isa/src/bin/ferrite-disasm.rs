//! `ferrite-disasm --gen 9 IN.bin [--hex] [--validate]`: raw instruction bytes (or, with
//! `--hex`, hex text as in Mesa's `.expected` files) to Mesa-syntax text on stdout.

use ferrite_isa::{cli, decode_program, disasm, validate, Gen};
use std::io::Write;
use std::process::ExitCode;

fn run() -> Result<(), String> {
    let a = cli::parse_args(std::env::args().skip(1), &[])?;
    let gen = a.gen.unwrap_or(Gen::Gen9);
    let input = a.single_input("usage: ferrite-disasm --gen 9 IN.bin [--hex] [--validate]")?;
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
        let found = validate::validate_program_at(&insts, &offsets, bytes.len(), gen);
        cli::validation_result(input, &found, |k| format!("offset {}", offsets[k]))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    cli::exit("ferrite-disasm", run())
}
