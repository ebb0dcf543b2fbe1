//! Canonical values: the `Value` tree, RCVE v1 and presentation JSON, digests, operators,
//! indexing, runtime conversions and sensitivity labels (spec §2.4.1, §2.4.2, §3.3, §6.2).
//!
//! Both the analyzer (folding literals) and the engine (compute, project and convert nodes) call
//! into this module, so a value computes, encodes and fails the same way at compile time and at
//! run time.
//!
//! # Values
//!
//! [`Value`] is Null, Bool, Int (i64), [`Number`] (finite binary64, `-0.0` stored as `0`), String
//! (`Arc<str>`), Bytes (`Arc<[u8]>`), [`List`] and [`Object`] (an Object or a Map: unique keys
//! kept sorted by raw UTF-8 bytes). Clones are cheap; composites know their depth, and no value
//! nests deeper than [`MAX_DEPTH`] (`RL4303`), so every recursive walk is bounded.
//!
//! `Value`'s `==` is identity (equal RCVE bytes): `Int(1) != Number(1.0)`. The language's `==`
//! is [`equals`], which compares numbers by value.
//!
//! # Encodings and digests
//!
//! - [`rcve::encode`] / [`rcve::decode`]: RCVE v1, the bytes behind every digest. The decoder
//!   accepts only canonical bytes and reports a [`rcve::DecodeErrorKind`] and offset otherwise
//!   (`RL7201` as a [`ValueError`]).
//! - [`to_presentation_json`]: RFC 8785 numbers and escapes, keys in UTF-8 byte order, no
//!   whitespace; Bytes anywhere fail with `RL5207`. [`to_serde_json`] for embedding in host JSON.
//! - [`parse_json`]: strict host JSON (`RL8101`): an integer literal outside i64, a duplicate key,
//!   a lone surrogate, a byte order mark or a number that overflows or underflows binary64 is an
//!   error naming its JSON path, never an approximation; [`parse_json_document`] reads the same
//!   grammar into `serde_json` values (the registry file).
//! - [`sha256`], [`keyed`] and [`canonical_digest`]: a [`Digest`] printing as `sha256:<hex>` or
//!   `hmac-sha256:<key id>:<hex>`; the keyed form is required when any path is labelled.
//!
//! # Operators, indexing, conversions
//!
//! - [`unary`] / [`binary`] with [`UnaryOp`] / [`BinaryOp`]: every row of the operator table,
//!   checked Integer arithmetic (`RL5101`), division by zero (`RL5102`), non-finite results
//!   (`RL5103`), exact Integer → Number widening only (`RL5104`), operand kinds no row accepts
//!   (`RL5201`), no truthiness (`RL5202`, also [`expect_bool`] for conditions).
//! - [`index`] and [`member`]: list/String/Bytes positions with negative normalization and
//!   object/map keys (`RL5203`, `RL5205`, `RL5206` with the closest keys); [`computed_key`] for
//!   `{ [expr]: value }` (`RL5209`).
//! - [`convert`] to a [`ShapeId`] of a [`Shapes`] arena, the runtime face of the schema
//!   vocabulary: exact, structural (Integer → Number, null optional properties dropped,
//!   element-wise lists/maps/objects) and formatting to String within [`ConversionLimits`]
//!   (`RL4301`, `RL4302`), with the [`Rank`] used. Failures: `RL5301`–`RL5304`.
//!
//! # Sensitivity
//!
//! [`Sensitivity`] orders public < sensitive < secret. [`Labels`] says which paths of a value
//! carry which label, and [`Labelled`] pairs a value with its labels and offers the same
//! operations — composites, operators, projection, conversion, formatting, digests — so that a
//! derived value is never less sensitive than what it came from (invariant 10).
//! [`Labelled::redacted`] and [`ValueError::redacted`] prepare values and errors for viewers.
//!
//! # Errors
//!
//! Every failure is a [`ValueError`]: a stable [`crate::diag::Code`], a message, structured
//! details (an [`Object`]) and the sensitivity of the data they quote. Nothing here panics on
//! any input.

mod arith;
mod caps;
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
mod state_serde;
#[cfg(test)]
mod test_values;

pub use caps::{Cap, Excess, ValueCaps};
pub use compare::equals;
pub use convert::{ConversionLimits, Converted, Rank, convert};
pub use digest::{
    Digest, DigestKey, DigestParseError, ScalarListPrefix, canonical_digest, keyed, sha256, sha256_of_scalars,
};
pub use error::ValueError;
pub use format::{push_scalar_text, scalar_text};
pub use index::{closest_keys, computed_key, index, member};
pub use json_in::{
    JsonError, JsonErrorKind, parse_json, parse_json_bytes, parse_json_document, parse_json_widening,
    parse_json_with_depth,
};
pub use json_out::{push_json_string, to_presentation_json, to_serde_json, write_presentation_json};
pub use labelled::Labelled;
pub use model::{Kind, List, MAX_DEPTH, Object, Value};
pub use number::Number;
pub use ops::{BinaryOp, UnaryOp, binary, expect_bool, unary};
pub use sensitivity::{Labels, Segment, Sensitivity, path_text};
pub use shape::{ObjectShape, PropertyShape, Shape, ShapeId, ShapeNode, Shapes};
