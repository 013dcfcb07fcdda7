//! `ferrite-bench`: Ferrite against Mesa's Intel driver (anv, on Mesa's noop drm-shim) over
//! the project's shader corpus — shader statistics, pipeline creation time and driver
//! overhead, each driver in its own child process, merged into one table. See
//! `docs/performance.md`.

pub mod corpus;
pub mod issue18;
pub mod json;
pub mod report;
pub mod scaling;
pub mod svg;
pub mod worker;
