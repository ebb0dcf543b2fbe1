//! Runlet: a small orchestration language whose effects are host-registered tool calls, and the
//! runtime that plans, schedules, journals and observes its runs.
#![forbid(unsafe_code)]

pub mod analyze;
pub mod diag;
pub mod engine;
pub mod journal;
pub mod observe;
pub mod schema;
pub mod stdlib;
pub mod syntax;
pub mod value;
