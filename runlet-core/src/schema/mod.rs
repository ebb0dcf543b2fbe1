//! Schemas and the registry (spec §3.1, §2.3): the portable schema vocabulary, interned and
//! normalized; JSON Schema import; tool descriptors. The registry of tools built from them is
//! `crate::registry`.

mod arena;
mod call_shape;
mod descriptor;
mod discriminator;
mod display;
mod docs;
pub(crate) mod fields;
mod fingerprint;
pub(crate) mod import;
mod infer;
mod issue;
mod json_path;
mod label;
mod locate;
mod model;
mod names;
mod shapes;
pub(crate) mod tool_entry;
mod union;
mod validate;

pub use arena::{Definition, SchemaArena};
pub use call_shape::accepts_empty_object;
pub use descriptor::{
    CallSchema, ErrorDescriptor, ExecutionClass, ExecutionOrigin, McpOrigin, Param, ToolDescriptor,
};
pub use discriminator::{DiscriminatorError, constant_text, value_of as discriminant_value};
pub use display::SchemaDisplay;
pub use docs::{SchemaDoc, SchemaDocs};
pub use fingerprint::Fingerprint;
pub use import::{ImportOptions, UnsupportedKeywords};
pub use infer::{InferenceLoss, Inferred};
pub use issue::{RegistryError, RegistryIssue};
pub use json_path::{JsonPath, PathSegment};
pub use label::{labels_of, strongest_label};
pub use locate::locate;
pub use model::{
    Constant, DefId, IntegerRange, LengthRange, ListSchema, NumberRange, ObjectSchema, Property, Schema,
    SchemaId, SchemaKind, StringSchema, UnionSchema,
};
pub use names::{
    NameError, QualifiedName, identifier_from, is_default_ignorable, is_identifier, is_reserved, nfc,
    skeleton, visible,
};
pub use shapes::ShapeMap;
pub use union::{Normalized, PrecisionLoss};
pub use validate::{ValidationError, validate};
