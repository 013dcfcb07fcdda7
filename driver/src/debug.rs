//! `FERRITE_DEBUG` (debug switches) and `FERRITE_LOG` (log level).
//!
//! Every switch is declared once, in [`FLAGS`], with its one-line help; `FERRITE_DEBUG=help`
//! prints that table. Parts that run their own switches (the compiler) get them passed in as
//! options, so the registry stays the one list a user reads.

use std::sync::{Once, OnceLock};

/// One debug switch: the name users type and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagInfo {
    pub flag: Flag,
    pub name: &'static str,
    pub help: &'static str,
}

/// The debug switches. Add a variant and a row in [`FLAGS`] together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// Log every Vulkan entry point call.
    Api,
    /// Log device-memory allocations, frees and mappings.
    Mem,
    /// Log physical-device enumeration decisions (render nodes seen, skipped, opened).
    Enum,
    /// Dump every command buffer's batch (dwords) at vkEndCommandBuffer.
    Batch,
}

/// The registry: one row per switch.
pub const FLAGS: &[FlagInfo] = &[
    FlagInfo {
        flag: Flag::Api,
        name: "api",
        help: "log every Vulkan entry point call (at info level)",
    },
    FlagInfo {
        flag: Flag::Mem,
        name: "mem",
        help: "log device-memory allocations, frees and mappings",
    },
    FlagInfo {
        flag: Flag::Enum,
        name: "enum",
        help: "log physical-device enumeration (render nodes, sim selection)",
    },
    FlagInfo {
        flag: Flag::Batch,
        name: "batch",
        help: "dump each command buffer's batch when it is built (first submission)",
    },
];

/// A set of switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DebugFlags(u64);

impl DebugFlags {
    pub fn has(self, flag: Flag) -> bool {
        self.0 & (1 << flag as u32) != 0
    }

    pub fn insert(&mut self, flag: Flag) {
        self.0 |= 1 << flag as u32;
    }
}

/// What parsing a `FERRITE_DEBUG` value found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub flags: DebugFlags,
    /// A compiler or simulated-device switch was named (they log at info too).
    pub other_switches: bool,
    pub unknown: Vec<String>,
    pub help: bool,
}

/// Parses a comma list of switch names. Unknown names are collected, never fatal.
pub fn parse(value: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if word == "help" {
            parsed.help = true;
        } else if let Some(info) = FLAGS.iter().find(|f| f.name == word) {
            parsed.flags.insert(info.flag);
        } else if ferrite_compiler::DebugFlags::REGISTRY
            .iter()
            .chain(kernel_iface::DEBUG_FLAGS)
            .any(|(n, _)| *n == word)
        {
            // A compiler switch (passed to the compiler as options at pipeline creation) or a
            // simulated-device switch (read by kernel-iface itself).
            parsed.other_switches = true;
        } else {
            parsed.unknown.push(word.to_string());
        }
    }
    parsed
}

/// The help text `FERRITE_DEBUG=help` prints.
pub fn help_text() -> String {
    let mut text = String::from("FERRITE_DEBUG: comma-separated list of\n");
    for f in FLAGS {
        text.push_str(&format!("  {:<9} {}\n", f.name, f.help));
    }
    for (name, help) in ferrite_compiler::DebugFlags::REGISTRY {
        text.push_str(&format!("  {name:<9} compiler: {help}\n"));
    }
    for (name, help) in kernel_iface::DEBUG_FLAGS {
        // `batch` is also a driver switch, listed above.
        if !FLAGS.iter().any(|f| f.name == *name) {
            text.push_str(&format!("  {name:<9} {help}\n"));
        }
    }
    text.push_str("  help      print this list\n");
    text
}

static FLAGS_SET: OnceLock<DebugFlags> = OnceLock::new();
static INIT: Once = Once::new();

/// Reads `FERRITE_DEBUG` and initialises logging (`FERRITE_LOG`), once per process. Without
/// `FERRITE_LOG` the level is `warn`, or `info` when a debug switch is on (switches log at info).
pub fn init() {
    INIT.call_once(|| {
        let parsed = parse(&std::env::var("FERRITE_DEBUG").unwrap_or_default());
        let default_level = if parsed.flags == DebugFlags::default() && !parsed.other_switches {
            "warn"
        } else {
            "info"
        };
        let env = env_logger::Env::new()
            .filter_or("FERRITE_LOG", default_level)
            .write_style("FERRITE_LOG_STYLE");
        // Another component of the host process may own the global logger; then we log through it.
        let _ = env_logger::Builder::from_env(env)
            .format_timestamp(None)
            .try_init();
        if parsed.help {
            eprint!("{}", help_text());
        }
        for word in &parsed.unknown {
            log::warn!(
                "FERRITE_DEBUG: unknown flag '{word}' ignored (FERRITE_DEBUG=help lists them)"
            );
        }
        let _ = FLAGS_SET.set(parsed.flags);
    });
}

/// The switches in effect for this process.
pub fn flags() -> DebugFlags {
    init();
    FLAGS_SET.get().copied().unwrap_or_default()
}

pub fn enabled(flag: Flag) -> bool {
    flags().has(flag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_known_unknown_and_help() {
        let p = parse("api, bogus,help,,mem");
        assert!(p.flags.has(Flag::Api));
        assert!(p.flags.has(Flag::Mem));
        assert!(!p.flags.has(Flag::Enum));
        assert!(p.help);
        assert_eq!(p.unknown, vec!["bogus".to_string()]);
    }

    #[test]
    fn registry_names_are_unique_and_every_flag_has_one_row() {
        for (i, a) in FLAGS.iter().enumerate() {
            assert!(
                FLAGS[i + 1..].iter().all(|b| b.name != a.name),
                "duplicate {}",
                a.name
            );
            assert_eq!(FLAGS.iter().filter(|b| b.flag == a.flag).count(), 1);
        }
        for flag in [Flag::Api, Flag::Mem, Flag::Enum, Flag::Batch] {
            assert!(
                FLAGS.iter().any(|f| f.flag == flag),
                "{flag:?} missing from FLAGS"
            );
        }
    }

    #[test]
    fn help_lists_every_flag() {
        let text = help_text();
        for f in FLAGS {
            assert!(text.contains(f.name) && text.contains(f.help));
        }
        let others = ferrite_compiler::DebugFlags::REGISTRY
            .iter()
            .chain(kernel_iface::DEBUG_FLAGS);
        for (name, _) in others {
            assert!(text.contains(name), "help misses {name}");
        }
    }

    #[test]
    fn compiler_and_simulator_switches_are_not_unknown() {
        let p = parse("asm,simtrace,simstrict,no16");
        assert!(p.unknown.is_empty(), "{:?}", p.unknown);
        assert!(p.other_switches);
        assert!(!parse("api").other_switches);
    }
}
