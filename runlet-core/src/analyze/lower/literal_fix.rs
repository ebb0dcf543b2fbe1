//! Repairs offered with `RL2310` when a literal is outside what its target accepts: the nearest
//! bound for an Integer outside its range, and the union variant the other properties of an
//! object literal choose (`{ type: "bank", card_id: … }` for `"card"`). An Integer for a String
//! enumeration gets none: the schema keeps its values sorted, so no index means one of them.

use crate::diag::{Fix, Span};
use crate::schema::{SchemaId, SchemaKind, constant_text, discriminant_value};
use crate::syntax::token::TokenKind;
use crate::value::Value;

use super::Lowerer;

impl Lowerer<'_> {
    /// The repair for the literal `constant` at `span` that `target` rejects, when one follows
    /// from the schema alone.
    pub(super) fn literal_repair(&self, span: Span, constant: &Value, target: SchemaId) -> Option<Fix> {
        let variants = self.types.variants(target);
        let kinds = || variants.iter().map(|&v| self.types.kind(v));
        match constant {
            Value::Int(index) => {
                let range = kinds().find_map(|k| match k {
                    SchemaKind::Integer(range) => Some(*range),
                    _ => None,
                })?;
                let nearest = match (range.min, range.max) {
                    (Some(min), _) if *index < min => min,
                    (_, Some(max)) if *index > max => max,
                    _ => return None,
                };
                Some(Fix::suggest(
                    format!("use the nearest accepted value, {nearest}"),
                    span,
                    nearest.to_string(),
                ))
            }
            Value::Object(object) => {
                let (property, value) = self.chosen_variant(&variants, object)?;
                let at = self.property_value_span(span, &property)?;
                Some(Fix::machine(
                    format!("set `{property}` to {value}, the variant the other properties fit"),
                    at,
                    value,
                ))
            }
            _ => None,
        }
    }

    /// The discriminator property and the value of the one variant whose properties the
    /// object's others fit: every other key declared, every required property present.
    fn chosen_variant(
        &self,
        variants: &[SchemaId],
        object: &crate::value::Object,
    ) -> Option<(String, String)> {
        let arena = self.types.arena();
        let objects: Vec<SchemaId> = variants
            .iter()
            .copied()
            .filter(|&v| matches!(self.types.kind(v), SchemaKind::Object(_)))
            .collect();
        let property = object.entries().iter().map(|(k, _)| k).find(|key| {
            objects.len() > 1 && objects.iter().all(|&v| discriminant_value(arena, v, key).is_ok())
        })?;
        let fitting: Vec<SchemaId> = objects
            .iter()
            .copied()
            .filter(|&v| {
                let SchemaKind::Object(schema) = self.types.kind(v) else { return false };
                let others_declared =
                    object.entries().iter().all(|(key, _)| key == property || schema.property(key).is_some());
                let required_present =
                    schema.properties.iter().filter(|p| p.required).all(|p| object.get(&p.name).is_some());
                others_declared && required_present
            })
            .collect();
        let [variant] = fitting[..] else { return None };
        let value = constant_text(&discriminant_value(arena, variant, property).ok()?);
        Some((property.to_string(), value))
    }

    /// The span of the value of `key: value` directly inside the object literal at `literal`.
    fn property_value_span(&self, literal: Span, key: &str) -> Option<Span> {
        let text = self.text(literal);
        let tokens = crate::syntax::lexer::lex(text).tokens;
        let mut depth = 0usize;
        for (i, token) in tokens.iter().enumerate() {
            match token.kind {
                TokenKind::LBrace | TokenKind::LBracket | TokenKind::LParen => depth += 1,
                TokenKind::RBrace | TokenKind::RBracket | TokenKind::RParen => {
                    depth = depth.saturating_sub(1)
                }
                _ if depth == 1
                    && &text[token.span.range()] == key
                    && tokens.get(i + 1).is_some_and(|t| t.kind == TokenKind::Colon) =>
                {
                    let value = tokens.get(i + 2)?.span;
                    return Some(Span::new(literal.start + value.start, literal.start + value.end));
                }
                _ => {}
            }
        }
        None
    }
}
