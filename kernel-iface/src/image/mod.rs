//! Images in memory as Gen9 lays them out: the one layout module shared by the driver
//! (memory requirements, subresource layouts, RENDER_SURFACE_STATE fields) and the
//! simulated GPU (typed messages and the sampler). Rules: docs/images.md, "Layout".

pub mod layout;

pub use layout::{ImageDesc, ImageDim, ImageLayout, SurfaceStateFields, Tiling};
