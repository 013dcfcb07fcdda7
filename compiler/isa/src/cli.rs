//! Small shared helpers for the command-line tools (argument parsing, input formats).
//! Not part of the stable API.

use crate::error::IsaError;
use crate::model::Gen;
use crate::validate::Violation;
use std::process::ExitCode;

/// Parsed common options.
#[derive(Debug, Default)]
pub struct Args {
    pub gen: Option<Gen>,
    pub output: Option<String>,
    pub validate: bool,
    /// Input is text hex bytes (as Mesa's `.expected` files), not raw binary.
    pub hex: bool,
    pub inputs: Vec<String>,
    /// `--name value` options not known to the common parser.
    pub extra: Vec<(String, String)>,
    pub flags: Vec<String>,
}

impl Args {
    /// The one input file of a tool that takes no options beyond the common ones; `usage` is
    /// the tool's usage line, the message for anything else.
    pub fn single_input(&self, usage: &str) -> Result<&str, String> {
        if let Some(f) = self.flags.first() {
            return Err(format!("unknown option {f}\n{usage}"));
        }
        match self.inputs.as_slice() {
            [input] => Ok(input),
            _ => Err(usage.into()),
        }
    }
}

/// The validator's findings in `input` as one message, each line placed by `at` (given the
/// instruction's index: a line and column of the text, or a byte offset); Ok when there are
/// none.
pub fn validation_result(
    input: &str,
    found: &[Violation],
    at: impl Fn(usize) -> String,
) -> Result<(), String> {
    if found.is_empty() {
        return Ok(());
    }
    let mut msg = format!("{input}: {} validation error(s)\n", found.len());
    for x in found {
        msg.push_str(&format!("{}: {x}\n", at(x.index)));
    }
    Err(msg)
}

/// A tool's exit status; an error is printed as `tool: message` on stderr, without the
/// message's trailing line breaks.
pub fn exit(tool: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{tool}: {}", e.trim_end());
            ExitCode::FAILURE
        }
    }
}

/// Parses `--gen N`, `-o FILE`, `--validate`, `--hex`; other `--x value` pairs listed in
/// `valued` go to `extra`, other `--x` to `flags`.
pub fn parse_args(args: impl Iterator<Item = String>, valued: &[&str]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = args.peekable();
    while let Some(s) = it.next() {
        match s.as_str() {
            "--gen" | "-g" => {
                let v = it.next().ok_or("--gen needs a value")?;
                let n: u32 = v
                    .trim_start_matches("gen")
                    .parse()
                    .map_err(|_| format!("bad --gen '{v}'"))?;
                a.gen = Some(
                    Gen::from_number(n).ok_or(format!("unsupported generation {n} (8 or 9)"))?,
                );
            }
            "-o" | "--output" => a.output = Some(it.next().ok_or("-o needs a file name")?),
            "--validate" => a.validate = true,
            "--hex" => a.hex = true,
            x if valued.contains(&x) => {
                let v = it.next().ok_or(format!("{x} needs a value"))?;
                a.extra.push((x.to_string(), v));
            }
            x if x.starts_with('-') && x.len() > 1 => a.flags.push(x.to_string()),
            _ => a.inputs.push(s),
        }
    }
    Ok(a)
}

/// One native instruction as a line of four little-endian dwords (`0x........ ...`, no line
/// break): the input format of `intel-gen4disasm`.
pub fn hex_dwords(w: u128) -> String {
    format!(
        "0x{:08x} 0x{:08x} 0x{:08x} 0x{:08x}",
        w as u32,
        (w >> 32) as u32,
        (w >> 64) as u32,
        (w >> 96) as u32
    )
}

/// Reads hex text (`40 00 60 00 ...`, whitespace separated, `#` comments) into bytes.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, IsaError> {
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let mut col = 1;
        for tok in line.split_whitespace() {
            let pos = line[col - 1..].find(tok).map_or(col, |p| p + col);
            let v = u8::from_str_radix(tok.trim_start_matches("0x"), 16).map_err(|_| {
                IsaError::Asm {
                    line: ln + 1,
                    col: pos,
                    msg: format!("bad hex byte '{tok}'"),
                }
            })?;
            out.push(v);
            col = pos + tok.len();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_dwords_prints_the_low_dword_first() {
        let w = 0x0000_0004_0000_0003_0000_0002_8000_0001_u128;
        assert_eq!(hex_dwords(w), "0x80000001 0x00000002 0x00000003 0x00000004");
    }
}
