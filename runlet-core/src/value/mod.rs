//! Canonical values: the `Value` tree, RCVE v1 and presentation JSON, digests, operators,
//! indexing, runtime conversions and sensitivity labels (spec §2.4.1, §2.4.2, §3.3, §6.2).

mod arith;
mod compare;
mod convert;
mod digest;
mod error;
mod format;
mod index;
mod json_in;
mod json_out;
mod labelled;
mod model;
mod number;
mod ops;
pub mod rcve;
mod sensitivity;
mod shape;

pub use compare::equals;
pub use convert::{ConversionLimits, Converted, Rank, convert};
pub use digest::{Digest, DigestKey, DigestParseError, canonical_digest, keyed, sha256};
pub use error::ValueError;
pub use format::{push_scalar_text, scalar_text};
pub use index::{closest_keys, computed_key, index, member};
pub use json_in::{JsonError, JsonErrorKind, parse_json, parse_json_bytes, parse_json_with_depth};
pub use labelled::Labelled;
pub use json_out::{push_json_string, to_presentation_json, to_serde_json, write_presentation_json};
pub use model::{Kind, List, MAX_DEPTH, Object, Value};
pub use number::Number;
pub use ops::{BinaryOp, UnaryOp, binary, expect_bool, unary};
pub use sensitivity::{Labels, Segment, Sensitivity, path_text};
pub use shape::{ObjectShape, PropertyShape, Shape, ShapeId, ShapeNode, Shapes};
