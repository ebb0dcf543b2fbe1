//! Runlet: a small orchestration language whose effects are host-registered tool calls, and the
//! runtime that plans, schedules, journals and observes its runs.
#![forbid(unsafe_code)]

// The modules in pipeline order, each importing only those above it (scripts/check-layers).
pub mod analyze;
pub mod diag;
pub mod engine;
pub mod journal;
pub mod observe;
pub mod plan;
pub mod registry;
pub mod runtime;
pub mod schema;
pub mod scripted;
pub mod stdlib;
pub mod syntax;
pub mod value;
