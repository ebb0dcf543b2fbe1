//! The prelude of intrinsics end to end: every function at its edges through analysis and a run,
//! analyzer diagnostics for misuse, journaled samples under replay, the catalogue entries of the
//! intrinsic codes, and docs/STDLIB.md against the code.

mod catalogue;
mod diagnostics;
mod docs;
mod edges;
mod properties;
mod replay;
mod support;
