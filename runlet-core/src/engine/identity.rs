//! Operation and dispatch identities (spec §4.2): SHA-256 digests naming one semantic external
//! operation and one transport attempt of it, over a versioned RCVE list of their components.

use std::fmt;
use std::str::FromStr;

use crate::analyze::WorkflowIdentity;
use crate::value::rcve::ScalarRef;
use crate::value::{Digest, ScalarListPrefix, sha256_of_scalars};

/// Everything an [`OperationId`] is derived from (spec §4.2).
#[derive(Debug, Clone, Copy)]
pub struct OperationComponents<'a> {
    pub workflow: &'a WorkflowIdentity,
    /// The call's syntax path ([`crate::syntax::path::SyntaxPath`]'s text form).
    pub call_site: &'a str,
    /// Empty for static nodes; the iteration or arm key for dynamic ones.
    pub dynamic_key: &'a str,
    /// The tool descriptor's `schema_version`.
    pub schema_version: &'a str,
    /// The digest of the canonical argument List (spec §2.3): `Labelled::digest` of the list, so
    /// that it is keyed exactly when some path of the arguments is sensitive or secret (§6.2).
    pub input_digest: &'a Digest,
    /// Changes only when policy authorizes a fresh external operation (spec §5.4).
    pub generation: u32,
}

/// Names the layout of the operation identity list; a layout change must change it.
const OPERATION_FORMAT: &str = "runlet.operation_id/1";
/// Names the layout of the dispatch identity list.
const DISPATCH_FORMAT: &str = "runlet.dispatch_id/1";

/// A workflow's identity with the prefix of its operation ids hashed once: a program's runs
/// share one ([`crate::engine::RunCore::with_workflow`]).
#[derive(Debug)]
pub struct Workflow {
    identity: WorkflowIdentity,
    operations: OperationPrefix,
}

impl Workflow {
    pub fn new(identity: WorkflowIdentity) -> Workflow {
        let operations = OperationPrefix::of(&identity);
        Workflow { identity, operations }
    }

    pub fn identity(&self) -> &WorkflowIdentity {
        &self.identity
    }

    /// The operation id of the call `components` names within this workflow
    /// (`components.workflow` is this workflow's identity).
    pub fn operation_id(&self, components: &OperationComponents<'_>) -> OperationId {
        self.operations.derive(components)
    }
}

/// The items of every operation id list of one workflow, hashed once: its format, source and
/// registry digests and language version. A run derives each of its operation ids from it.
#[derive(Debug, Clone)]
pub struct OperationPrefix {
    hash: ScalarListPrefix,
    /// The workflow hashed, to check each derivation is of it.
    #[cfg(debug_assertions)]
    workflow: WorkflowIdentity,
}

/// How many items an operation id list has.
const OPERATION_ITEMS: usize = 9;

impl OperationPrefix {
    pub fn of(workflow: &WorkflowIdentity) -> OperationPrefix {
        let (source, registry) = (workflow.source_digest.to_string(), workflow.registry_digest.to_string());
        OperationPrefix {
            hash: ScalarListPrefix::new(
                OPERATION_ITEMS,
                &[
                    ScalarRef::Str(OPERATION_FORMAT),
                    ScalarRef::Str(&source),
                    ScalarRef::Str(&registry),
                    ScalarRef::Int(i64::from(workflow.language_version)),
                ],
            ),
            #[cfg(debug_assertions)]
            workflow: workflow.clone(),
        }
    }

    /// [`OperationId::derive`] of `components`, whose workflow is the one this prefix is of.
    pub fn derive(&self, components: &OperationComponents<'_>) -> OperationId {
        #[cfg(debug_assertions)]
        debug_assert_eq!(&self.workflow, components.workflow, "an operation of another workflow");
        components.input_digest.with_text(|input| {
            OperationId(
                *self
                    .hash
                    .digest(&[
                        ScalarRef::Str(components.call_site),
                        ScalarRef::Str(components.dynamic_key),
                        ScalarRef::Str(components.schema_version),
                        ScalarRef::Str(input),
                        ScalarRef::Int(i64::from(components.generation)),
                    ])
                    .bytes(),
            )
        })
    }
}

/// The identity of one semantic external operation. Tools claiming idempotency treat equal ids
/// as the same requested operation. Prints as `op:<64 hex>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperationId([u8; 32]);

/// The identity of one transport attempt of an operation. Prints as `dispatch:<64 hex>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DispatchId([u8; 32]);

impl OperationId {
    /// SHA-256 over the RCVE bytes of the list
    /// `["runlet.operation_id/1", source_digest, registry_digest, language_version, call_site,
    /// dynamic_key, schema_version, input_digest, generation]`, digests in their text form
    /// (which names the algorithm and key id). RCVE is prefix-free, so distinct component lists
    /// never encode to the same bytes. Deriving many ids of one workflow, an
    /// [`OperationPrefix`] hashes its part once.
    pub fn derive(components: &OperationComponents<'_>) -> OperationId {
        OperationPrefix::of(components.workflow).derive(components)
    }

    /// The id of this operation's dispatch number `dispatch_generation`: SHA-256 over the RCVE
    /// bytes of `["runlet.dispatch_id/1", operation id bytes, dispatch_generation]`.
    pub fn dispatch_id(&self, dispatch_generation: u32) -> DispatchId {
        DispatchId(
            *sha256_of_scalars(&[
                ScalarRef::Str(DISPATCH_FORMAT),
                ScalarRef::Bytes(&self.0),
                ScalarRef::Int(i64::from(dispatch_generation)),
            ])
            .bytes(),
        )
    }

    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl DispatchId {
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// Text that is not an [`OperationId`] or [`DispatchId`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not {what}: expected `{prefix}:` followed by 64 lowercase hex digits")]
pub struct IdParseError {
    text: String,
    what: &'static str,
    prefix: &'static str,
}

/// Text form, parsing and serde (as that text) for both id types.
macro_rules! hex_id {
    ($ty:ident, $prefix:literal, $what:literal) => {
        impl $ty {
            /// Its text, built on the stack and lent to `use_text`.
            fn with_text<R>(&self, use_text: impl FnOnce(&str) -> R) -> R {
                const PREFIX: &str = concat!($prefix, ":");
                let mut text = [0u8; PREFIX.len() + 64];
                text[..PREFIX.len()].copy_from_slice(PREFIX.as_bytes());
                hex::encode_to_slice(self.0, &mut text[PREFIX.len()..]).expect("64 hex digits of 32 bytes");
                use_text(std::str::from_utf8(&text).expect("ASCII"))
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // One write of the whole text, so `to_string` allocates once.
                self.with_text(|text| f.write_str(text))
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }

        impl FromStr for $ty {
            type Err = IdParseError;

            fn from_str(text: &str) -> Result<$ty, IdParseError> {
                let invalid = || IdParseError { text: text.to_owned(), what: $what, prefix: $prefix };
                let digits = text.strip_prefix(concat!($prefix, ":")).ok_or_else(invalid)?;
                if !digits.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                    return Err(invalid());
                }
                let mut bytes = [0u8; 32];
                hex::decode_to_slice(digits, &mut bytes).map_err(|_| invalid())?;
                Ok($ty(bytes))
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.with_text(|text| s.serialize_str(text))
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

hex_id!(OperationId, "op", "an operation id");
hex_id!(DispatchId, "dispatch", "a dispatch id");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{DigestKey, Labelled, Labels, List, Object, Sensitivity, Value, rcve, sha256};

    fn workflow() -> WorkflowIdentity {
        WorkflowIdentity {
            source_digest: sha256(&Value::from("return crm.customer(customer_id)")),
            registry_digest: sha256(&Value::from("registry")),
            language_version: 1,
        }
    }

    fn arguments(items: Vec<Value>) -> Value {
        Value::List(List::new(items).expect("shallow"))
    }

    fn components<'a>(workflow: &'a WorkflowIdentity, input_digest: &'a Digest) -> OperationComponents<'a> {
        OperationComponents {
            workflow,
            call_site: "let:customer/value#00112233445566778899aabbccddeeff",
            dynamic_key: "",
            schema_version: "3",
            input_digest,
            generation: 0,
        }
    }

    /// Pins the encoding: a change to the component list or its layout must show up here. The
    /// expected ids were computed apart from this crate, from the RCVE table of `value::rcve`.
    #[test]
    fn golden_operation_and_dispatch_ids() {
        let workflow = workflow();
        let input = sha256(&arguments(vec![Value::from("c-42")]));
        let operation = OperationId::derive(&components(&workflow, &input));
        assert_eq!(
            operation.to_string(),
            "op:7fb75bfb9d7f6cb86a1b33dab00dce318c7131d3e2cbe694c5382ee08a157b8f"
        );
        assert_eq!(
            operation.dispatch_id(1).to_string(),
            "dispatch:b9b091be0a1fe7d7af91cd534c86bab1f356dc711cd40bce717a63dba4395f1f"
        );
    }

    #[test]
    fn the_id_is_the_digest_of_the_documented_list() {
        let workflow = workflow();
        let input = sha256(&arguments(vec![Value::Int(7)]));
        let parts = components(&workflow, &input);
        let list = arguments(vec![
            Value::from("runlet.operation_id/1"),
            Value::from(workflow.source_digest.to_string()),
            Value::from(workflow.registry_digest.to_string()),
            Value::Int(1),
            Value::from(parts.call_site),
            Value::from(""),
            Value::from("3"),
            Value::from(input.to_string()),
            Value::Int(0),
        ]);
        let expected = sha256(&list);
        assert_eq!(OperationId::derive(&parts).bytes(), expected.bytes());
        assert!(rcve::encode(&list).starts_with(&[0x30, 9]));
    }

    #[test]
    fn one_prefix_derives_every_operation_of_its_workflow() {
        let workflow = workflow();
        let prefix = OperationPrefix::of(&workflow);
        for n in 0..3 {
            let input = sha256(&arguments(vec![Value::Int(n)]));
            let parts = OperationComponents {
                dynamic_key: if n == 0 { "" } else { "i1~00" },
                ..components(&workflow, &input)
            };
            assert_eq!(prefix.derive(&parts), OperationId::derive(&parts), "call {n}");
        }
    }

    #[test]
    fn every_component_changes_the_operation_id() {
        let workflow = workflow();
        let input = sha256(&arguments(vec![Value::from("c-42")]));
        let base = components(&workflow, &input);
        let other_source = WorkflowIdentity { source_digest: sha256(&Value::Null), ..workflow.clone() };
        let other_registry = WorkflowIdentity { registry_digest: sha256(&Value::Null), ..workflow.clone() };
        let other_language = WorkflowIdentity { language_version: 2, ..workflow.clone() };
        let other_input = sha256(&arguments(vec![Value::from("c-43")]));
        let variants = [
            base,
            OperationComponents { workflow: &other_source, ..base },
            OperationComponents { workflow: &other_registry, ..base },
            OperationComponents { workflow: &other_language, ..base },
            OperationComponents { call_site: "let:other/value#00", ..base },
            OperationComponents { dynamic_key: "0:sha256:ab", ..base },
            OperationComponents { schema_version: "4", ..base },
            OperationComponents { input_digest: &other_input, ..base },
            OperationComponents { generation: 1, ..base },
        ];
        let ids: Vec<OperationId> = variants.iter().map(OperationId::derive).collect();
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), variants.len(), "{ids:?}");
        let again = components(&workflow, &input);
        assert_eq!(OperationId::derive(&again), ids[0]);
    }

    /// Components are list elements, not concatenated text: moving a character across the
    /// boundary between two components gives a different id.
    #[test]
    fn component_boundaries_cannot_collide() {
        let workflow = workflow();
        let input = sha256(&arguments(vec![]));
        let base = components(&workflow, &input);
        let left = OperationComponents { call_site: "a/b", dynamic_key: "c", ..base };
        let right = OperationComponents { call_site: "a/", dynamic_key: "bc", ..base };
        assert_ne!(OperationId::derive(&left), OperationId::derive(&right));
    }

    #[test]
    fn dispatch_generations_give_distinct_dispatch_ids() {
        let workflow = workflow();
        let input = sha256(&arguments(vec![]));
        let operation = OperationId::derive(&components(&workflow, &input));
        assert_ne!(operation.dispatch_id(1), operation.dispatch_id(2));
        assert_eq!(operation.dispatch_id(1), operation.dispatch_id(1));
        let other =
            OperationId::derive(&OperationComponents { generation: 1, ..components(&workflow, &input) });
        assert_ne!(operation.dispatch_id(1), other.dispatch_id(1));
    }

    /// Spec §12.1: `f(a, b)` and `f({ x: a })` keep distinct argument-list envelopes, so their
    /// operations differ; so do `f(a)` and `f([a])`.
    #[test]
    fn call_normalization_keeps_the_envelope() {
        let workflow = workflow();
        let a = Value::from("c-42");
        let b = Value::Int(3);
        let object = Object::from_pairs(vec![("x".into(), a.clone())]).expect("shallow");
        let envelopes = [
            arguments(vec![a.clone(), b]),
            arguments(vec![Value::Object(object)]),
            arguments(vec![a.clone()]),
            arguments(vec![arguments(vec![a])]),
        ];
        let digests: Vec<Digest> = envelopes.iter().map(sha256).collect();
        let ids: Vec<OperationId> =
            digests.iter().map(|digest| OperationId::derive(&components(&workflow, digest))).collect();
        for (i, id) in ids.iter().enumerate() {
            for other in &ids[i + 1..] {
                assert_ne!(id, other);
            }
        }
    }

    /// A sensitive argument list is digested with the run's key, so the id differs from the one
    /// the plain digest would give and depends on the key.
    #[test]
    fn sensitive_inputs_use_the_keyed_digest() {
        let workflow = workflow();
        let list = arguments(vec![Value::from("a@example.com")]);
        let public = Labelled::public(list.clone());
        let sensitive = Labelled::new(list, Labels::uniform(Sensitivity::Sensitive));
        let key_one = DigestKey::new("k1", b"one").expect("valid key");
        let key_two = DigestKey::new("k2", b"two").expect("valid key");
        let digests = [public.digest(&key_one), sensitive.digest(&key_one), sensitive.digest(&key_two)];
        assert_eq!(digests[0], public.digest(&key_two), "public inputs do not depend on the key");
        let ids: Vec<OperationId> =
            digests.iter().map(|digest| OperationId::derive(&components(&workflow, digest))).collect();
        assert_ne!(ids[0], ids[1]);
        assert_ne!(ids[1], ids[2]);
    }

    #[test]
    fn text_form_round_trips_and_rejects_malformed_ids() {
        let workflow = workflow();
        let input = sha256(&arguments(vec![]));
        let operation = OperationId::derive(&components(&workflow, &input));
        let dispatch = operation.dispatch_id(1);
        assert_eq!(operation.to_string().parse::<OperationId>(), Ok(operation));
        assert_eq!(dispatch.to_string().parse::<DispatchId>(), Ok(dispatch));
        let json = serde_json::to_string(&operation).expect("serializes");
        assert_eq!(serde_json::from_str::<OperationId>(&json).expect("deserializes"), operation);
        let hex = hex::encode(operation.bytes());
        for bad in [
            hex.clone(),
            format!("dispatch:{hex}"),
            format!("op:{}", &hex[..62]),
            format!("op:{}", hex.to_uppercase()),
            format!("op:{hex}00"),
            "op:".to_owned(),
        ] {
            assert!(bad.parse::<OperationId>().is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<DispatchId>(&json).is_err());
    }
}
