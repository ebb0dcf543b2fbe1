//! Tests of the analyzer: golden diagnostics for every code it reports, fixes that make progress,
//! HIR of the spec's programs, conversion and inference matrices, bounds, and robustness.

mod appendix;
mod bounds;
mod cases;
mod catalogue;
mod corpus;
mod fixes;
mod generated;
mod matrix;
mod mistakes;
mod properties;
mod sensitivity;
mod support;
mod valid;
