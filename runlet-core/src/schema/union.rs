//! Union normalization: flattening, `Any` absorbing, merging constant booleans and strings, no
//! duplicates, canonical order (kind, bounds, fingerprint), discriminators and the variant cap.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::arena::SchemaArena;
use super::discriminator::{self, DiscriminatorError};
use super::model::{LengthRange, Schema, SchemaId, SchemaKind, StringSchema, UnionSchema};
use crate::value::Sensitivity;

/// The result of building a union under a variant cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Normalized {
    pub schema: SchemaId,
    /// Set when the union had more variants than allowed and was widened to `Any`.
    pub widened: Option<PrecisionLoss>,
}

/// A union widened to `Any` because it had `variants` distinct variants, more than `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrecisionLoss {
    pub variants: usize,
    pub limit: usize,
}

/// Normal variants, or `Any` (with the strongest label among the inputs) when one absorbs all.
enum Variants {
    Any(Sensitivity),
    Some(Vec<SchemaId>),
}

impl SchemaArena {
    /// The normalized union of `variants` (which must not be empty to mean anything: an empty
    /// input gives `Any`), with an inferred discriminator; more than `max_variants` distinct
    /// variants widen to `Any` and report the loss.
    pub fn union(&mut self, variants: &[SchemaId], max_variants: usize) -> Normalized {
        match self.normal_variants(variants) {
            Variants::Any(sensitivity) => self.exact(Schema { kind: SchemaKind::Any, sensitivity }),
            Variants::Some(variants) => self.capped(variants, max_variants, None),
        }
    }

    /// Like [`SchemaArena::union`], but `property` must discriminate the variants.
    pub fn discriminated_union(
        &mut self,
        variants: &[SchemaId],
        property: &str,
        max_variants: usize,
    ) -> Result<Normalized, DiscriminatorError> {
        match self.normal_variants(variants) {
            Variants::Any(_) => Err(DiscriminatorError::AnyVariant),
            Variants::Some(variants) => {
                discriminator::check(self, &variants, property)?;
                Ok(self.capped(variants, max_variants, Some(property)))
            }
        }
    }

    /// The union without a cap, keeping `discriminator` unless it is definitely invalid.
    pub(super) fn exact_union(&mut self, variants: &[SchemaId], discriminator: Option<&str>) -> SchemaId {
        match self.normal_variants(variants) {
            Variants::Any(sensitivity) => self.exact(Schema { kind: SchemaKind::Any, sensitivity }).schema,
            Variants::Some(variants) => {
                let kept = discriminator.filter(|name| {
                    matches!(
                        discriminator::check(self, &variants, name),
                        Ok(()) | Err(DiscriminatorError::Unresolved)
                    )
                });
                self.capped(variants, usize::MAX, kept).schema
            }
        }
    }

    fn exact(&mut self, schema: Schema) -> Normalized {
        Normalized { schema: self.insert(schema), widened: None }
    }

    fn capped(
        &mut self,
        variants: Vec<SchemaId>,
        max_variants: usize,
        discriminator: Option<&str>,
    ) -> Normalized {
        match variants.as_slice() {
            [] => self.exact(Schema::public(SchemaKind::Any)),
            [only] => Normalized { schema: *only, widened: None },
            _ if variants.len() > max_variants => {
                let sensitivity = self.strongest(&variants);
                let widened = PrecisionLoss { variants: variants.len(), limit: max_variants };
                Normalized {
                    widened: Some(widened),
                    ..self.exact(Schema { kind: SchemaKind::Any, sensitivity })
                }
            }
            _ => {
                let discriminator: Option<Arc<str>> = match discriminator {
                    Some(name) => Some(name.into()),
                    None => discriminator::infer(self, &variants),
                };
                let kind = SchemaKind::Union(UnionSchema { variants: variants.into(), discriminator });
                self.exact(Schema::public(kind))
            }
        }
    }

    fn strongest(&self, variants: &[SchemaId]) -> Sensitivity {
        variants.iter().map(|&v| self.get(v).sensitivity).max().unwrap_or_default()
    }

    fn normal_variants(&mut self, input: &[SchemaId]) -> Variants {
        let mut flat = Vec::with_capacity(input.len());
        for &id in input {
            match self.kind(id) {
                SchemaKind::Union(union) => flat.extend(union.variants.iter().copied()),
                _ => flat.push(id),
            }
        }
        if flat.iter().any(|&v| matches!(self.kind(v), SchemaKind::Any)) {
            return Variants::Any(self.strongest(&flat));
        }
        let mut variants = self.merge_constants(flat);
        variants.sort_by(|&a, &b| {
            let (x, y) = (self.kind(a), self.kind(b));
            rank(x)
                .cmp(&rank(y))
                .then_with(|| numeric_order(x, y))
                .then_with(|| self.fingerprint(a).cmp(&self.fingerprint(b)))
        });
        variants.dedup();
        Variants::Some(variants)
    }

    /// Merges constant booleans into `Boolean` and string enumerations that share their other
    /// facets into one enumeration (a plain `String` absorbs them).
    fn merge_constants(&mut self, variants: Vec<SchemaId>) -> Vec<SchemaId> {
        type StringKey = (Sensitivity, Option<Arc<str>>, LengthRange);
        let mut booleans: BTreeMap<Sensitivity, Option<bool>> = BTreeMap::new();
        let mut strings: BTreeMap<StringKey, Option<Vec<Arc<str>>>> = BTreeMap::new();
        let mut kept = Vec::with_capacity(variants.len());
        for id in variants {
            let Schema { kind, sensitivity } = self.get(id);
            match kind {
                SchemaKind::Boolean(value) => {
                    booleans
                        .entry(*sensitivity)
                        .and_modify(|merged| *merged = merged.filter(|m| Some(*m) == *value))
                        .or_insert(*value);
                }
                SchemaKind::String(string) => {
                    let key = (*sensitivity, string.format.clone(), string.length);
                    let merged = strings.entry(key).or_insert_with(|| Some(Vec::new()));
                    match (merged.as_mut(), &string.values) {
                        (Some(all), Some(values)) => all.extend(values.iter().cloned()),
                        _ => *merged = None,
                    }
                }
                _ => kept.push(id),
            }
        }
        for (sensitivity, value) in booleans {
            kept.push(self.intern(Schema { kind: SchemaKind::Boolean(value), sensitivity }));
        }
        for ((sensitivity, format, length), values) in strings {
            let string = StringSchema { format, values: values.map(Arc::from), length };
            kept.push(self.intern(Schema { kind: SchemaKind::String(string), sensitivity }));
        }
        kept
    }
}

/// Integers and numbers by their bounds, so constants read in ascending order.
fn numeric_order(x: &SchemaKind, y: &SchemaKind) -> Ordering {
    match (x, y) {
        (SchemaKind::Integer(a), SchemaKind::Integer(b)) => (a.min, a.max).cmp(&(b.min, b.max)),
        (SchemaKind::Number(a), SchemaKind::Number(b)) => (a.min, a.max).cmp(&(b.min, b.max)),
        _ => Ordering::Equal,
    }
}

/// The position of a kind in canonical union order; fingerprints order within a kind.
fn rank(kind: &SchemaKind) -> u8 {
    match kind {
        SchemaKind::Any => 0,
        SchemaKind::Null => 1,
        SchemaKind::Boolean(_) => 2,
        SchemaKind::Integer(_) => 3,
        SchemaKind::Number(_) => 4,
        SchemaKind::String(_) => 5,
        SchemaKind::Bytes => 6,
        SchemaKind::List(_) => 7,
        SchemaKind::Object(_) => 8,
        SchemaKind::Map(_) => 9,
        SchemaKind::Union(_) => 10,
        SchemaKind::Ref(_) => 11,
    }
}
