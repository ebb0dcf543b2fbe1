//! Labelled values: a value together with the sensitivity of each of its paths, and the
//! operations that derive new labelled values so labels are never lost (invariant 10).

use std::sync::Arc;

use super::convert::{ConversionLimits, Rank, convert};
use super::digest::{Digest, DigestKey, canonical_digest};
use super::error::ValueError;
use super::index::{computed_key, located};
use super::json_out::to_presentation_json;
use super::model::{List, Object, Value};
use super::ops::{BinaryOp, UnaryOp, binary, unary};
use super::sensitivity::{Labels, Segment, Sensitivity};
use super::shape::{ShapeId, Shapes};

/// A value and the labels of its paths. Every derivation below gives the result labels at
/// least as strong as those of the inputs it was derived from:
///
/// - projection keeps the label of the selected path, raised by the index's label;
/// - list and object construction put each element's labels under its segment, and a computed
///   key's label on the whole object (keys are visible wherever the object is);
/// - list concatenation and object merge keep each surviving element's labels;
/// - every other operator, and formatting to text, gives the result the strongest label of
///   any input;
/// - errors carry the strongest label of the inputs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Labelled {
    value: Value,
    labels: Labels,
}

impl Labelled {
    pub fn new(value: Value, labels: Labels) -> Labelled {
        Labelled { value, labels }
    }

    /// A value with every path public.
    pub fn public(value: Value) -> Labelled {
        Labelled { value, labels: Labels::public() }
    }

    /// A value with every path at `level`.
    pub fn uniform(value: Value, level: Sensitivity) -> Labelled {
        Labelled { value, labels: Labels::uniform(level) }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    pub fn into_parts(self) -> (Value, Labels) {
        (self.value, self.labels)
    }

    /// The strongest label anywhere in the value.
    pub fn max_sensitivity(&self) -> Sensitivity {
        self.labels.max()
    }

    /// A list of labelled elements.
    pub fn list(items: Vec<Labelled>) -> Result<Labelled, ValueError> {
        let (values, labels): (Vec<Value>, Vec<Labels>) = items.into_iter().map(Labelled::into_parts).unzip();
        let children = labels.into_iter().enumerate().map(|(i, l)| (Segment::Index(i), l));
        Ok(Labelled {
            value: List::new(values)?.into(),
            labels: Labels::composite(Sensitivity::Public, children),
        })
    }

    /// An object literal: each key is a String, or a scalar computed key converted to its
    /// canonical text (`RL5209` otherwise). A repeated key keeps its last entry.
    pub fn object(entries: Vec<(Labelled, Labelled)>) -> Result<Labelled, ValueError> {
        let mut key_level = Sensitivity::Public;
        let mut pairs = Vec::with_capacity(entries.len());
        let mut labels = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let text = computed_key(&key.value).map_err(|e| e.with_sensitivity(key.max_sensitivity()))?;
            key_level = key_level.max(key.max_sensitivity());
            labels.push((text.clone(), value.labels));
            pairs.push((text, value.value));
        }
        let object = Object::from_pairs(pairs)?;
        // Later labels overwrite earlier ones for a repeated key, matching "last wins".
        let children: std::collections::BTreeMap<Arc<str>, Labels> = labels.into_iter().collect();
        let children = children.into_iter().map(|(k, l)| (Segment::Key(k), l));
        Ok(Labelled { value: object.into(), labels: Labels::composite(key_level, children) })
    }

    /// A prefix operator; the result has the operand's strongest label.
    pub fn unary(&self, op: UnaryOp) -> Result<Labelled, ValueError> {
        let level = self.max_sensitivity();
        let value = unary(op, &self.value).map_err(|e| e.with_sensitivity(level))?;
        Ok(Labelled::uniform(value, level))
    }

    /// An infix operator. List concatenation and object merge keep per-element labels; every
    /// other row gives the result the strongest label of both operands.
    pub fn binary(&self, op: BinaryOp, right: &Labelled) -> Result<Labelled, ValueError> {
        let level = self.max_sensitivity().max(right.max_sensitivity());
        let value = binary(op, &self.value, &right.value).map_err(|e| e.with_sensitivity(level))?;
        // Concatenation and merge keep each element's labels; the whole result (its length,
        // its key set) is derived from both operands, so the root takes both root labels.
        let root = self.labels.level().max(right.labels.level());
        let labels = match (op, &self.value, &right.value) {
            (BinaryOp::Add, Value::List(left_list), Value::List(_)) => {
                let offset = left_list.len();
                let shifted = right.labels.children().map(|(segment, labels)| match segment {
                    Segment::Index(i) => (Segment::Index(offset + i), labels.clone()),
                    key => (key.clone(), labels.clone()),
                });
                Labels::composite(
                    root,
                    self.labels.children().map(|(s, l)| (s.clone(), l.clone())).chain(shifted),
                )
            }
            (BinaryOp::Add, Value::Object(_), Value::Object(right_object)) => {
                let overwritten =
                    |segment: &Segment| matches!(segment, Segment::Key(k) if right_object.contains_key(k));
                let kept = self.labels.children().filter(|(segment, _)| !overwritten(segment));
                Labels::composite(
                    root,
                    kept.chain(right.labels.children()).map(|(s, l)| (s.clone(), l.clone())),
                )
            }
            _ => Labels::uniform(level),
        };
        Ok(Labelled { value, labels })
    }

    /// `self[index]`: the labels of the selected path, raised by the index's strongest label.
    pub fn index(&self, index: &Labelled) -> Result<Labelled, ValueError> {
        let level = self.max_sensitivity().max(index.max_sensitivity());
        let (value, segment) = located(&self.value, &index.value).map_err(|e| e.with_sensitivity(level))?;
        Ok(Labelled { value, labels: self.labels.child(&segment).raised(index.max_sensitivity()) })
    }

    /// `self.name`: the labels of that property.
    pub fn member(&self, name: &str) -> Result<Labelled, ValueError> {
        self.index(&Labelled::public(Value::string(name)))
    }

    /// Converts to `target` (see [`convert`]), keeping labels on their paths.
    pub fn convert(
        &self,
        target: ShapeId,
        shapes: &Shapes,
        limits: &ConversionLimits,
    ) -> Result<(Labelled, Rank), ValueError> {
        let converted = convert(&self.value, &self.labels, target, shapes, limits)?;
        Ok((Labelled { value: converted.value, labels: converted.labels }, converted.rank))
    }

    /// The presentation JSON text as a String value carrying the strongest label inside.
    pub fn presentation_json(&self) -> Result<Labelled, ValueError> {
        let level = self.max_sensitivity();
        let text = to_presentation_json(&self.value).map_err(|e| e.with_sensitivity(level))?;
        Ok(Labelled::uniform(Value::string(text), level))
    }

    /// The digest spec §6.2 requires: keyed under `key` when any path is sensitive or secret.
    pub fn digest(&self, key: &DigestKey) -> Digest {
        canonical_digest(&self.value, &self.labels, key)
    }

    /// The value as a viewer cleared up to `allowed` may see it: every path labelled above
    /// `allowed` is replaced by the String `"<redacted:sensitive>"` or `"<redacted:secret>"`.
    pub fn redacted(&self, allowed: Sensitivity) -> Value {
        redact(&self.value, &self.labels, allowed)
    }
}

fn redact(value: &Value, labels: &Labels, allowed: Sensitivity) -> Value {
    if labels.level() > allowed {
        return Value::string(format!("<redacted:{}>", labels.level()));
    }
    if labels.max() <= allowed {
        return value.clone();
    }
    // Something inside is stronger than `allowed`: rebuild the composite around it. The shape
    // and depth are unchanged, so the constructors cannot fail.
    match value {
        Value::List(list) => {
            let items = list
                .iter()
                .enumerate()
                .map(|(i, item)| redact(item, &labels.child(&Segment::Index(i)), allowed));
            List::new(items.collect()).map_or_else(|_| value.clone(), Value::List)
        }
        Value::Object(object) => {
            let entries = object.entries().iter().map(|(key, item)| {
                (key.clone(), redact(item, &labels.child(&Segment::Key(key.clone())), allowed))
            });
            Object::from_pairs(entries.collect()).map_or_else(|_| value.clone(), Value::Object)
        }
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    fn public(value: impl Into<Value>) -> Labelled {
        Labelled::public(value.into())
    }

    fn secret(value: impl Into<Value>) -> Labelled {
        Labelled::uniform(value.into(), Sensitivity::Secret)
    }

    fn record(entries: Vec<(&str, Labelled)>) -> Labelled {
        Labelled::object(entries.into_iter().map(|(k, v)| (public(k), v)).collect()).expect("shallow")
    }

    #[test]
    fn composites_put_labels_on_paths_and_projection_reads_them() {
        let user = record(vec![("name", public("Ada")), ("token", secret("t-1"))]);
        assert_eq!(user.labels().level(), Sensitivity::Public);
        assert_eq!(user.max_sensitivity(), Sensitivity::Secret);
        assert_eq!(user.member("name").expect("present").max_sensitivity(), Sensitivity::Public);
        assert_eq!(user.member("token").expect("present").max_sensitivity(), Sensitivity::Secret);
        let list = Labelled::list(vec![public(1), user.clone()]).expect("shallow");
        assert_eq!(list.labels().level_at(&[Segment::Index(1), key("token")]), Sensitivity::Secret);
        assert_eq!(list.index(&public(0)).expect("present").max_sensitivity(), Sensitivity::Public);
        let by_secret_index = list.index(&secret(0)).expect("present");
        assert_eq!(by_secret_index.max_sensitivity(), Sensitivity::Secret);
    }

    #[test]
    fn operators_take_the_strongest_label() {
        let sum = public(1)
            .binary(BinaryOp::Add, &Labelled::uniform(2.into(), Sensitivity::Sensitive))
            .expect("adds");
        assert_eq!(sum.labels(), &Labels::uniform(Sensitivity::Sensitive));
        let text = public("id: ").binary(BinaryOp::Add, &secret(7)).expect("formats");
        assert_eq!(text.value(), &Value::from("id: 7"));
        assert_eq!(text.max_sensitivity(), Sensitivity::Secret);
        let user = record(vec![("token", secret("t"))]);
        let found = public("token").binary(BinaryOp::In, &user).expect("membership");
        assert_eq!(found.max_sensitivity(), Sensitivity::Secret);
        assert_eq!(secret(true).unary(UnaryOp::Not).expect("not").max_sensitivity(), Sensitivity::Secret);
        let error = secret(1).binary(BinaryOp::Div, &public(0)).expect_err("division by zero");
        assert_eq!((error.code(), error.sensitivity()), (codes::DIVISION_BY_ZERO, Sensitivity::Secret));
    }

    #[test]
    fn merge_and_concat_keep_per_element_labels() {
        let defaults = record(vec![("host", public("h")), ("token", secret("old"))]);
        let overrides = record(vec![
            ("token", public("new")),
            ("port", Labelled::uniform(1.into(), Sensitivity::Sensitive)),
        ]);
        let merged = defaults.binary(BinaryOp::Add, &overrides).expect("merges");
        assert_eq!(merged.labels().level_at(&[key("token")]), Sensitivity::Public);
        assert_eq!(merged.labels().level_at(&[key("port")]), Sensitivity::Sensitive);
        assert_eq!(merged.labels().level_at(&[key("host")]), Sensitivity::Public);
        let kept = overrides.binary(BinaryOp::Add, &defaults).expect("merges");
        assert_eq!(kept.labels().level_at(&[key("token")]), Sensitivity::Secret);

        let left = Labelled::list(vec![secret(1), public(2)]).expect("shallow");
        let right = Labelled::list(vec![public(3), secret(4)]).expect("shallow");
        let joined = left.binary(BinaryOp::Add, &right).expect("concatenates");
        let levels: Vec<Sensitivity> =
            (0..4).map(|i| joined.labels().level_at(&[Segment::Index(i)])).collect();
        assert_eq!(
            levels,
            [Sensitivity::Secret, Sensitivity::Public, Sensitivity::Public, Sensitivity::Secret]
        );
        let whole_secret = secret(List::new(vec![1.into()]).expect("shallow"));
        let joined = whole_secret.binary(BinaryOp::Add, &right).expect("concatenates");
        assert_eq!(joined.labels(), &Labels::uniform(Sensitivity::Secret));
    }

    #[test]
    fn computed_keys_label_the_whole_object() {
        let keyed = Labelled::object(vec![(secret(42), public(true))]).expect("shallow");
        assert_eq!(
            keyed.value(),
            &Value::Object(Object::from_pairs(vec![("42".into(), true.into())]).expect("shallow"))
        );
        assert_eq!(keyed.labels().level(), Sensitivity::Secret);
        let last_wins =
            Labelled::object(vec![(public("a"), secret(1)), (public("a"), public(2))]).expect("shallow");
        assert_eq!(last_wins.labels(), &Labels::public());
        let error = Labelled::object(vec![(secret(Value::Null), public(1))]).expect_err("null key");
        assert_eq!((error.code(), error.sensitivity()), (codes::INVALID_COMPUTED_KEY, Sensitivity::Secret));
    }

    #[test]
    fn formatting_and_digests_follow_labels() {
        let user = record(vec![
            ("name", public("Ada")),
            ("token", Labelled::uniform("t".into(), Sensitivity::Sensitive)),
        ]);
        let text = user.presentation_json().expect("representable");
        assert_eq!(text.value(), &Value::from(r#"{"name":"Ada","token":"t"}"#));
        assert_eq!(text.labels(), &Labels::uniform(Sensitivity::Sensitive));
        let key = DigestKey::new("k", b"key").expect("valid key");
        assert!(matches!(user.digest(&key), Digest::HmacSha256 { .. }));
        assert!(matches!(user.member("name").expect("present").digest(&key), Digest::Sha256(_)));
    }

    #[test]
    fn redaction_replaces_labelled_paths() {
        let user = record(vec![
            ("name", public("Ada")),
            ("email", Labelled::uniform("a@example.com".into(), Sensitivity::Sensitive)),
            ("token", secret("t-1")),
        ]);
        let shown = |allowed| to_presentation_json(&user.redacted(allowed)).expect("representable");
        assert_eq!(
            shown(Sensitivity::Public),
            r#"{"email":"<redacted:sensitive>","name":"Ada","token":"<redacted:secret>"}"#
        );
        assert_eq!(
            shown(Sensitivity::Sensitive),
            r#"{"email":"a@example.com","name":"Ada","token":"<redacted:secret>"}"#
        );
        assert_eq!(user.redacted(Sensitivity::Secret), user.value().clone());
        assert_eq!(
            secret(Value::bytes(vec![1])).redacted(Sensitivity::Public),
            Value::from("<redacted:secret>")
        );
    }
}
