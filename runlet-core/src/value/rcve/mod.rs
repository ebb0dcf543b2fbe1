//! RCVE v1, the Runlet Canonical Value Encoding (spec §3.3): the prefix-free binary form whose
//! exact bytes feed every digest, operation identity and journal value.
//!
//! | value | bytes |
//! |---|---|
//! | Null | `0x00` |
//! | Boolean | `0x01` false, `0x02` true |
//! | Integer | `0x10`, minimal zig-zag LEB128 |
//! | Number | `0x11`, 8-byte big-endian binary64 (never `-0.0`, never non-finite) |
//! | String | `0x20`, minimal unsigned LEB128 byte length, UTF-8 bytes |
//! | Bytes | `0x21`, minimal unsigned LEB128 length, raw bytes |
//! | List | `0x30`, minimal unsigned LEB128 count, each element |
//! | Object/Map | `0x31`, minimal unsigned LEB128 count, String-encoded key and value pairs sorted by key bytes |

mod decode;
mod encode;

pub use decode::{DecodeError, DecodeErrorKind, decode, decode_with_depth};
pub use encode::{ScalarRef, encode, encode_into};
pub(super) use encode::{Sink, write_list_header, write_scalar_list, write_scalars, write_value};

const TAG_NULL: u8 = 0x00;
const TAG_FALSE: u8 = 0x01;
const TAG_TRUE: u8 = 0x02;
const TAG_INTEGER: u8 = 0x10;
const TAG_NUMBER: u8 = 0x11;
const TAG_STRING: u8 = 0x20;
const TAG_BYTES: u8 = 0x21;
const TAG_LIST: u8 = 0x30;
const TAG_OBJECT: u8 = 0x31;
