//! The execution engine (spec §2.4–2.8, §4, §5; docs/design/engine.md): the plan of a compiled
//! program, the deterministic run core that reacts to inputs with effects, and its events.

mod core;
mod error;
pub mod event;
pub mod plan;

pub use core::{CallHandle, CallRequest, Effect, Input, Outcome, RunCore, RunSettings};
pub use error::RunError;
pub use plan::Plan;
