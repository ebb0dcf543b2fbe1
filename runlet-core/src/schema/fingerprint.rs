//! Structural fingerprints of schema nodes: SHA-256 over a fixed encoding of the node with its
//! children's fingerprints, so equal schemas agree in every arena and canonical order is stable.

use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::model::{DefId, LengthRange, Schema, SchemaId, SchemaKind};
use crate::value::Sensitivity;

/// The first 128 bits of a node's structural SHA-256.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint([u8; 16]);

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", hex::encode(self.0))
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

/// Fingerprints `schema`, given the fingerprints of its children and the keys of definitions.
pub(super) fn fingerprint(
    schema: &Schema,
    child: impl Fn(SchemaId) -> Fingerprint,
    def_key: impl Fn(DefId) -> Arc<str>,
) -> Fingerprint {
    let mut out = Encoder(Sha256::new());
    out.byte(match schema.sensitivity {
        Sensitivity::Public => 0,
        Sensitivity::Sensitive => 1,
        Sensitivity::Secret => 2,
    });
    match &schema.kind {
        SchemaKind::Any => out.byte(0),
        SchemaKind::Null => out.byte(1),
        SchemaKind::Boolean(value) => {
            out.byte(2);
            out.byte(match value {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            });
        }
        SchemaKind::Integer(range) => {
            out.byte(3);
            out.option(range.min.map(|m| m as u64));
            out.option(range.max.map(|m| m as u64));
        }
        SchemaKind::Number(range) => {
            out.byte(4);
            out.option(range.min.map(|m| m.get().to_bits()));
            out.option(range.max.map(|m| m.get().to_bits()));
        }
        SchemaKind::String(string) => {
            out.byte(5);
            out.optional_text(string.format.as_deref());
            match &string.values {
                None => out.byte(0),
                Some(values) => {
                    out.byte(1);
                    out.number(values.len() as u64);
                    values.iter().for_each(|v| out.text(v));
                }
            }
            out.length(string.length);
        }
        SchemaKind::Bytes => out.byte(6),
        SchemaKind::List(list) => {
            out.byte(7);
            out.child(child(list.items));
            out.length(list.length);
        }
        SchemaKind::Object(object) => {
            out.byte(8);
            out.number(object.properties.len() as u64);
            for property in object.properties.iter() {
                out.text(&property.name);
                out.byte(u8::from(property.required) | u8::from(property.deprecated) << 1);
                out.number(property.aliases.len() as u64);
                property.aliases.iter().for_each(|a| out.text(a));
                out.child(child(property.schema));
            }
            match object.additional {
                None => out.byte(0),
                Some(additional) => {
                    out.byte(1);
                    out.child(child(additional));
                }
            }
        }
        SchemaKind::Map(values) => {
            out.byte(9);
            out.child(child(*values));
        }
        SchemaKind::Union(union) => {
            out.byte(10);
            out.number(union.variants.len() as u64);
            union.variants.iter().for_each(|&v| out.child(child(v)));
            out.optional_text(union.discriminator.as_deref());
        }
        SchemaKind::Ref(def) => {
            out.byte(11);
            out.text(&def_key(*def));
        }
    }
    let digest = out.0.finalize();
    let mut bytes = [0; 16];
    bytes.copy_from_slice(&digest[..16]);
    Fingerprint(bytes)
}

/// A prefix-free byte encoding fed straight into the hasher.
struct Encoder(Sha256);

impl Encoder {
    fn byte(&mut self, byte: u8) {
        self.0.update([byte]);
    }

    fn number(&mut self, number: u64) {
        self.0.update(number.to_be_bytes());
    }

    fn option(&mut self, number: Option<u64>) {
        match number {
            None => self.byte(0),
            Some(n) => {
                self.byte(1);
                self.number(n);
            }
        }
    }

    fn text(&mut self, text: &str) {
        self.number(text.len() as u64);
        self.0.update(text.as_bytes());
    }

    fn optional_text(&mut self, text: Option<&str>) {
        match text {
            None => self.byte(0),
            Some(t) => {
                self.byte(1);
                self.text(t);
            }
        }
    }

    fn length(&mut self, length: LengthRange) {
        self.option(length.min);
        self.option(length.max);
    }

    fn child(&mut self, fingerprint: Fingerprint) {
        self.0.update(fingerprint.0);
    }
}
