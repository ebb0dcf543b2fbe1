//! Free-text documentation found in registry schemas (title, description, examples, default,
//! flags), kept per tool by JSON path, outside the interned nodes so it never splits a schema.

use std::collections::BTreeMap;

/// The documentation annotations of one schema position.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaDoc {
    pub title: Option<String>,
    pub description: Option<String>,
    /// Each example as compact JSON text.
    pub examples: Vec<String>,
    /// The documented default as compact JSON text.
    pub default: Option<String>,
    pub deprecated: bool,
    pub read_only: bool,
    pub write_only: bool,
}

impl SchemaDoc {
    pub fn is_empty(&self) -> bool {
        *self == SchemaDoc::default()
    }
}

/// Documentation by JSON pointer relative to its tool entry (`/outputSchema/properties/email`)
/// or, for host inputs, to the `inputs` object (`/customer_id`).
pub type SchemaDocs = BTreeMap<String, SchemaDoc>;
