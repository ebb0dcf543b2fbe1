//! Runlet's C ABI (`include/runlet.h`): opaque handles, `{ptr,len}` strings, JSON for
//! variable-shape data, host vtables for tools, journals and events, and one panic boundary.
//!
//! Only boundary code lives here: every behaviour is `runlet-core`'s. The `runlet-capi` crate
//! links this crate into `librunlet.so` and `librunlet.a`; the header is generated from these
//! sources by cbindgen (see `tests/header.rs`).
#![allow(non_camel_case_types)]
// Every exported function has the same safety contract, stated once in the header's preamble:
// handles are NULL or live, views point at `len` readable bytes, out-pointers are writable.
#![allow(clippy::missing_safety_doc)]

#[macro_use]
mod boundary;

// cbindgen walks the modules in the order they are declared here, and that sets the order of the
// header's constants and functions: version, strings, errors, runtime, program, run, tool calls,
// journal, events, the graph page. The blank lines keep rustfmt from sorting them.
mod version;

mod strings;

mod error;

mod mcp;
mod runtime;
mod sqlite;
mod view;

mod postgres;
mod program;
mod recovery;
mod restart;
mod run;
mod stored;

mod executor;

mod journal;

mod events;

mod ready;

mod page;

// Internal helpers without C items.
mod handle;
mod reentrancy;
mod telemetry;
mod versioned;

pub use error::*;
pub use events::*;
pub use executor::*;
pub use journal::*;
pub use page::*;
pub use program::*;
pub use ready::*;
pub use recovery::*;
pub use run::*;
pub use runtime::*;
pub use sqlite::*;
pub use stored::*;
pub use strings::*;
pub use version::*;
pub use view::*;
