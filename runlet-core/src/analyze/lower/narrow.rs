//! Narrowing (spec §3.2): what a condition establishes about bindings in the arm it selects —
//! `x != null` removes null, `x.kind == "a"` keeps the discriminated variants whose `kind` is
//! `"a"` — through `not`, `and` and `or`.

use std::sync::Arc;

use crate::schema::{Constant, ObjectSchema, Property, SchemaId, SchemaKind, discriminant_value};
use crate::syntax::ast;

use super::super::types::Ty;
use super::Lowerer;
use super::scope::Narrowable;

/// The narrowed types a condition gives bindings where it holds and where it does not.
#[derive(Debug, Clone, Default)]
pub(super) struct Facts {
    pub when_true: Vec<(Narrowable, Ty)>,
    pub when_false: Vec<(Narrowable, Ty)>,
}

/// The left-hand side of a comparison with a literal: a binding or host input, or one property
/// of it.
struct Subject<'e> {
    binding: Narrowable,
    ty: SchemaId,
    property: Option<&'e str>,
}

impl Lowerer<'_> {
    /// What `condition` establishes. Reads bindings' current types; lowers nothing.
    pub(super) fn facts(&mut self, condition: &ast::Expr) -> Facts {
        use ast::ExprKind as K;
        match &condition.kind {
            K::Paren(inner) => self.facts(inner),
            K::Unary(ast::UnaryOp::Not, inner) => {
                let Facts { when_true, when_false } = self.facts(inner);
                Facts { when_true: when_false, when_false: when_true }
            }
            K::Binary(ast::BinaryOp::And, left, right) => {
                let first = self.facts(left);
                let mark = self.scopes.narrow(&first.when_true);
                let second = self.facts(right);
                self.scopes.forget(mark);
                Facts { when_true: [first.when_true, second.when_true].concat(), when_false: Vec::new() }
            }
            K::Binary(ast::BinaryOp::Or, left, right) => {
                let first = self.facts(left);
                let mark = self.scopes.narrow(&first.when_false);
                let second = self.facts(right);
                self.scopes.forget(mark);
                Facts { when_true: Vec::new(), when_false: [first.when_false, second.when_false].concat() }
            }
            K::Binary(op @ (ast::BinaryOp::Eq | ast::BinaryOp::NotEq), left, right) => {
                let facts = match (self.subject(left), literal(right), self.subject(right), literal(left)) {
                    (Some(subject), Some(constant), _, _) | (_, _, Some(subject), Some(constant)) => {
                        self.compare(&subject, &constant)
                    }
                    _ => Facts::default(),
                };
                match op {
                    ast::BinaryOp::NotEq => {
                        Facts { when_true: facts.when_false, when_false: facts.when_true }
                    }
                    _ => facts,
                }
            }
            _ => Facts::default(),
        }
    }

    fn subject<'e>(&mut self, e: &'e ast::Expr) -> Option<Subject<'e>> {
        let (ident, property) = match &e.kind {
            ast::ExprKind::Ident(ident) => (ident, None),
            ast::ExprKind::Member { object, name } => match &object.kind {
                ast::ExprKind::Ident(ident) => (ident, Some(name.name.as_str())),
                _ => return None,
            },
            ast::ExprKind::Paren(inner) => return self.subject(inner),
            _ => return None,
        };
        let (binding, declared) = match self.scopes.lookup(&ident.name) {
            Some(binding) => (Narrowable::Binding(binding), self.binding_facts[binding.index()].ty),
            None => {
                let input = self.input(&ident.name)?;
                (Narrowable::Input(input), Ty::Schema(self.host_inputs[input.index()].schema))
            }
        };
        let ty = match self.scopes.narrowed(binding).unwrap_or(declared) {
            Ty::Schema(schema) => schema,
            Ty::Never => return None,
        };
        Some(Subject { binding, ty, property })
    }

    /// The facts of `subject == constant`.
    fn compare(&mut self, subject: &Subject<'_>, constant: &Constant) -> Facts {
        let (when_true, when_false) = match (subject.property, constant) {
            (None, Constant::Null) => {
                if !self.types.admits_null(subject.ty) || self.types.is_any(subject.ty) {
                    return Facts::default();
                }
                (Ty::Schema(self.types.null), self.types.without_null(subject.ty))
            }
            (None, _) => return Facts::default(),
            (Some(property), constant) => {
                let mut matching = Vec::new();
                let mut others = Vec::new();
                for variant in self.types.variants(subject.ty) {
                    match self.variant_property(variant, property, constant) {
                        Decided::Equal => matching.push(Ty::Schema(variant)),
                        Decided::Different => others.push(Ty::Schema(variant)),
                        Decided::Unknown { when_different } => {
                            matching.push(Ty::Schema(variant));
                            others.push(when_different);
                        }
                    }
                }
                (self.types.union(&matching).0, self.types.union(&others).0)
            }
        };
        Facts {
            when_true: vec![(subject.binding, when_true)],
            when_false: vec![(subject.binding, when_false)],
        }
    }

    /// Whether `variant.property` always equals `constant`, never does, or may.
    fn variant_property(&mut self, variant: SchemaId, property: &str, constant: &Constant) -> Decided {
        let keep = Decided::Unknown { when_different: Ty::Schema(variant) };
        let SchemaKind::Object(object) = self.types.kind(variant).clone() else { return keep };
        if let Ok(value) = discriminant_value(self.types.arena(), variant, property) {
            return if &value == constant { Decided::Equal } else { Decided::Different };
        }
        match (constant, object.property(property)) {
            // `x.p != null` where `p` may be null: in that arm `p` is not null.
            (Constant::Null, Some(p)) if self.types.admits_null(p.schema) && !self.types.is_any(p.schema) => {
                let when_different = match self.types.without_null(p.schema) {
                    Ty::Never => Ty::Never,
                    Ty::Schema(schema) => Ty::Schema(self.with_property(&object, property, schema)),
                };
                Decided::Unknown { when_different }
            }
            _ => keep,
        }
    }

    /// `object` with property `name` given `schema`.
    fn with_property(&mut self, object: &ObjectSchema, name: &str, schema: SchemaId) -> SchemaId {
        let properties: Vec<Property> = object
            .properties
            .iter()
            .map(|p| if &*p.name == name { Property { schema, ..p.clone() } } else { p.clone() })
            .collect();
        self.types.intern(SchemaKind::Object(ObjectSchema {
            properties: Arc::from(properties),
            additional: object.additional,
        }))
    }
}

enum Decided {
    Equal,
    Different,
    /// Either; where the comparison fails, the variant narrows to `when_different`.
    Unknown {
        when_different: Ty,
    },
}

/// The constant a literal comparand denotes.
fn literal(e: &ast::Expr) -> Option<Constant> {
    match &e.kind {
        ast::ExprKind::Null => Some(Constant::Null),
        ast::ExprKind::Bool(b) => Some(Constant::Boolean(*b)),
        ast::ExprKind::String(text) => Some(Constant::String(Arc::from(text.as_str()))),
        ast::ExprKind::Integer(digits) => digits.parse().ok().map(Constant::Integer),
        ast::ExprKind::Paren(inner) => literal(inner),
        _ => None,
    }
}
