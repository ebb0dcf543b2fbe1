//! Canonical values: the `Value` tree, RCVE v1 and presentation JSON, digests, operators,
//! indexing, runtime conversions and sensitivity labels (spec §2.4.1, §2.4.2, §3.3, §6.2).

mod digest;
mod error;
mod format;
mod json_in;
mod json_out;
mod model;
mod number;
pub mod rcve;
mod sensitivity;

pub use digest::{Digest, DigestKey, DigestParseError, canonical_digest, keyed, sha256};
pub use error::ValueError;
pub use format::{push_scalar_text, scalar_text};
pub use json_in::{JsonError, JsonErrorKind, parse_json, parse_json_bytes, parse_json_with_depth};
pub use json_out::{push_json_string, to_presentation_json, to_serde_json, write_presentation_json};
pub use model::{Kind, List, MAX_DEPTH, Object, Value};
pub use number::Number;
pub use sensitivity::{Labels, Segment, Sensitivity, path_text};
