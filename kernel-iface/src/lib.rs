//! The kernel interface: i915 uAPI types, real render nodes and the simulated i915.
