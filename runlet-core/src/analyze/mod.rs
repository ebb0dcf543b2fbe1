//! The analyzer's output types (the analyzer itself lands separately).

pub mod hir;
