//! Faults the simulated kernel injects on request (`FERRITE_SIM_FAULTS`), so the driver's
//! error paths run in tests: the errno values a real i915 returns under memory pressure, on
//! signals, after a GPU hang or when its address space is full.
//!
//! The value is a comma-separated list of `name[@N]`. A one-shot fault fires on call N + 1 of
//! its kind (N = 0 when omitted) and never again, so the device (and the next one) works after
//! it. A storm hits every other attempt of every ioctl; libdrm's rule, which the driver
//! follows, is to repeat the call.

use std::sync::atomic::{AtomicU64, Ordering};

/// What can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// GEM_CREATE / GEM_CREATE_EXT fail with ENOMEM.
    CreateEnomem,
    /// mmap of an object's fake offset fails with ENOMEM.
    MmapEnomem,
    /// EXECBUFFER2 fails with EIO (the GPU is wedged).
    ExecEio,
    /// EXECBUFFER2 fails with ENOSPC (the objects do not fit even after eviction).
    ExecEnospc,
    /// The submitting context is banned, as after a hang: this EXECBUFFER2 and every later one
    /// on it fail with EIO, and its reset statistics count a lost batch.
    Ban,
    /// Every other ioctl attempt fails with EINTR.
    EintrStorm,
    /// Every other ioctl attempt fails with EAGAIN.
    EagainStorm,
}

/// The names `FERRITE_SIM_FAULTS` accepts, with what they do.
pub const FAULT_NAMES: &[(&str, FaultKind, &str)] = &[
    (
        "create-enomem",
        FaultKind::CreateEnomem,
        "GEM_CREATE fails with ENOMEM",
    ),
    (
        "mmap-enomem",
        FaultKind::MmapEnomem,
        "mmap of a GEM object fails with ENOMEM",
    ),
    ("exec-eio", FaultKind::ExecEio, "EXECBUFFER2 fails with EIO"),
    (
        "exec-enospc",
        FaultKind::ExecEnospc,
        "EXECBUFFER2 fails with ENOSPC",
    ),
    (
        "ban",
        FaultKind::Ban,
        "the context is banned (EIO from then on)",
    ),
    (
        "eintr",
        FaultKind::EintrStorm,
        "every other ioctl attempt fails with EINTR",
    ),
    (
        "eagain",
        FaultKind::EagainStorm,
        "every other ioctl attempt fails with EAGAIN",
    ),
];

#[derive(Debug)]
struct Rule {
    kind: FaultKind,
    after: u64,
    calls: AtomicU64,
}

/// The faults one simulated kernel injects.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<Rule>,
    attempts: AtomicU64,
}

impl Faults {
    /// Parses a `FERRITE_SIM_FAULTS` value; an unknown name or a bad count is an error.
    pub fn parse(spec: &str) -> Result<Faults, String> {
        let mut rules = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, after) = match item.split_once('@') {
                Some((n, a)) => (
                    n,
                    a.parse::<u64>()
                        .map_err(|_| format!("{item:?}: the count after @ is not a number"))?,
                ),
                None => (item, 0),
            };
            let kind = FAULT_NAMES
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, k, _)| *k)
                .ok_or_else(|| {
                    let known: Vec<&str> = FAULT_NAMES.iter().map(|(n, _, _)| *n).collect();
                    format!("unknown fault {name:?} (known: {})", known.join(", "))
                })?;
            rules.push(Rule {
                kind,
                after,
                calls: AtomicU64::new(0),
            });
        }
        Ok(Faults {
            rules,
            attempts: AtomicU64::new(0),
        })
    }

    /// `FERRITE_SIM_FAULTS`, or no faults; a bad value is logged and ignored.
    pub fn from_env() -> Faults {
        match std::env::var("FERRITE_SIM_FAULTS") {
            Ok(v) => Faults::parse(&v).unwrap_or_else(|e| {
                log::error!("FERRITE_SIM_FAULTS: {e}; no faults injected");
                Faults::default()
            }),
            Err(_) => Faults::default(),
        }
    }

    /// Whether any fault is configured.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Counts one call of `kind`; true if a one-shot fault of that kind fires on it.
    pub fn fire(&self, kind: FaultKind) -> bool {
        let mut fired = false;
        for r in self.rules.iter().filter(|r| r.kind == kind) {
            if r.calls.fetch_add(1, Ordering::Relaxed) == r.after {
                log::info!("simulated i915: injecting {kind:?}");
                fired = true;
            }
        }
        fired
    }

    /// The errno a storm injects into this ioctl attempt, if any.
    pub fn storm(&self) -> Option<i32> {
        let storm = self.rules.iter().find_map(|r| match r.kind {
            FaultKind::EintrStorm => Some(libc::EINTR),
            FaultKind::EagainStorm => Some(libc::EAGAIN),
            _ => None,
        })?;
        self.attempts
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(2)
            .then_some(storm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shot_faults_fire_once_after_n_calls() {
        let f = Faults::parse("create-enomem@2, exec-eio").unwrap();
        let fired: Vec<bool> = (0..5).map(|_| f.fire(FaultKind::CreateEnomem)).collect();
        assert_eq!(fired, [false, false, true, false, false]);
        assert!(f.fire(FaultKind::ExecEio));
        assert!(!f.fire(FaultKind::ExecEio));
        assert!(!f.fire(FaultKind::Ban));
        assert_eq!(f.storm(), None);
    }

    #[test]
    fn storms_hit_every_other_attempt() {
        let f = Faults::parse("eagain").unwrap();
        let hits: Vec<Option<i32>> = (0..4).map(|_| f.storm()).collect();
        assert_eq!(hits, [Some(libc::EAGAIN), None, Some(libc::EAGAIN), None]);
    }

    #[test]
    fn bad_specs_are_errors() {
        assert!(Faults::parse("").unwrap().is_empty());
        assert!(Faults::parse("nonsense")
            .unwrap_err()
            .contains("known: create-enomem"));
        assert!(Faults::parse("ban@x").is_err());
    }
}
