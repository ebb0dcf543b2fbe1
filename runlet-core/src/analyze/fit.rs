//! Static conversions (spec §3.3): whether values of one schema convert to another, at which
//! rank, whether the runtime must still check, or why not — without any value in hand.

use std::sync::Arc;

use crate::schema::{ObjectSchema, SchemaId, SchemaKind};
use crate::value::{Rank, Segment};

use super::FastMap;
use super::types::Types;

/// How deep the check follows nested schemas before trusting the runtime conversion.
const MAX_DEPTH: usize = 48;

/// A conversion that can succeed: the worst rank any part needs, and whether the value may
/// still fail at run time (it comes from `Any`, a map meeting an object, an open object meeting
/// a closed one, or a list meeting an empty-list schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fit {
    pub rank: Rank,
    pub checked: bool,
}

impl Fit {
    pub const EXACT: Fit = Fit { rank: Rank::Exact, checked: false };

    /// Nothing to do at run time: the value already has the target's schema.
    pub fn is_identity(self) -> bool {
        self == Fit::EXACT
    }

    fn and(self, other: Fit) -> Fit {
        Fit { rank: self.rank.max(other.rank), checked: self.checked || other.checked }
    }

    fn at_least(self, rank: Rank) -> Fit {
        Fit { rank: self.rank.max(rank), ..self }
    }

    fn checked() -> Fit {
        Fit { rank: Rank::Exact, checked: true }
    }
}

/// Why a conversion cannot succeed, and where inside the value (`path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Misfit {
    pub path: Vec<Segment>,
    pub reason: Reason,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reason {
    /// No row of the conversion matrix goes from this kind to that one.
    Kinds { from: SchemaId, to: SchemaId },
    /// Null (or a nullable value) where a String is required.
    NullToString,
    /// Bytes where a String is required, or as a leaf of a composite formatted to String.
    Bytes,
    /// A Number where an Integer is required: never implicit.
    NumberToInteger,
    /// A required target property the value lacks (`maybe`: it is optional in the value).
    MissingProperty { name: Arc<str>, maybe: bool, target: SchemaId },
    /// A property of the value the closed target does not declare.
    UndeclaredProperty { name: Arc<str>, target: SchemaId },
    /// Several union variants accept the value at the same rank.
    Ambiguous { variants: Vec<SchemaId>, rank: Rank },
}

type Verdict = Result<Fit, Misfit>;

/// Memoized static conversion checks for one analysis.
#[derive(Debug, Default)]
pub(crate) struct Fitter {
    memo: FastMap<(SchemaId, SchemaId), Verdict>,
    /// Work done, for the analysis budget.
    pub steps: u64,
}

impl Fitter {
    /// Whether values of `from` convert to `to`.
    pub fn fit(&mut self, types: &Types, from: SchemaId, to: SchemaId) -> Verdict {
        self.fit_at(types, from, to, 0)
    }

    fn fit_at(&mut self, types: &Types, from: SchemaId, to: SchemaId, depth: usize) -> Verdict {
        let (from, to) = (types.resolve(from), types.resolve(to));
        if from == to {
            return Ok(Fit::EXACT);
        }
        if depth > MAX_DEPTH {
            return Ok(Fit::checked());
        }
        if let Some(known) = self.memo.get(&(from, to)) {
            return known.clone();
        }
        self.steps += 1;
        // While a pair is being decided, meeting it again (a recursive schema) assumes success:
        // any mismatch is found on the way down the first visit.
        self.memo.insert((from, to), Ok(Fit::checked()));
        let verdict = self.decide(types, from, to, depth + 1);
        self.memo.insert((from, to), verdict.clone());
        verdict
    }

    fn decide(&mut self, types: &Types, from: SchemaId, to: SchemaId, depth: usize) -> Verdict {
        use SchemaKind as K;
        let kinds = || Misfit { path: Vec::new(), reason: Reason::Kinds { from, to } };
        match (types.kind(from), types.kind(to)) {
            (_, K::Any) => Ok(Fit::EXACT),
            (K::Any, _) => Ok(Fit::checked()),
            (K::Union(union), _) => {
                let mut fit = Fit::EXACT;
                for &variant in union.variants.iter() {
                    fit = fit.and(self.fit_at(types, variant, to, depth)?);
                }
                Ok(fit)
            }
            (_, K::Union(union)) => self.onto_union(types, from, to, &union.variants.clone(), depth),
            (K::Null, K::Null) | (K::Bytes, K::Bytes) => Ok(Fit::EXACT),
            (K::Null, K::String(_)) => Err(Misfit { path: Vec::new(), reason: Reason::NullToString }),
            (K::Bytes, K::String(_)) => Err(Misfit { path: Vec::new(), reason: Reason::Bytes }),
            (K::Boolean(a), K::Boolean(b)) => match (a, b) {
                (_, None) => Ok(Fit::EXACT),
                (Some(a), Some(b)) if a == b => Ok(Fit::EXACT),
                (None, Some(_)) => Ok(Fit::checked()),
                _ => Err(kinds()),
            },
            (K::Integer(_), K::Integer(_)) | (K::Number(_), K::Number(_)) => Ok(Fit::EXACT),
            (K::Integer(_), K::Number(_)) => Ok(Fit { rank: Rank::Structural, checked: false }),
            (K::Number(_), K::Integer(_)) => {
                Err(Misfit { path: Vec::new(), reason: Reason::NumberToInteger })
            }
            (K::String(a), K::String(b)) => Ok(strings(a.values.as_deref(), b.values.as_deref())),
            (K::Integer(_) | K::Number(_) | K::Boolean(_), K::String(_)) => {
                Ok(Fit { rank: Rank::Formatting, checked: false })
            }
            (K::List(_) | K::Object(_) | K::Map(_), K::String(_)) => {
                let mut path = Vec::new();
                match self.bytes_leaf(types, from, &mut path, depth) {
                    Some(()) => Err(Misfit { path, reason: Reason::Bytes }),
                    None => Ok(Fit { rank: Rank::Formatting, checked: false }),
                }
            }
            (K::List(a), K::List(b)) => {
                let (a, b) = (*a, *b);
                if a.length.max == Some(0) {
                    return Ok(Fit::EXACT);
                }
                let items =
                    self.fit_at(types, a.items, b.items, depth).map_err(|m| m.under(Segment::Index(0)))?;
                Ok(if b.length.max == Some(0) { items.and(Fit::checked()) } else { items })
            }
            (K::Map(a), K::Map(b)) => {
                let (a, b) = (*a, *b);
                self.fit_at(types, a, b, depth)
            }
            (K::Object(object), K::Map(values)) => {
                let (object, values) = (object.clone(), *values);
                let mut fit = Fit::EXACT;
                for p in object.properties.iter() {
                    let seg = Segment::Key(p.name.clone());
                    fit = fit.and(self.fit_at(types, p.schema, values, depth).map_err(|m| m.under(seg))?);
                }
                if let Some(additional) = object.additional {
                    fit = fit.and(self.fit_at(types, additional, values, depth)?);
                }
                Ok(fit)
            }
            (K::Object(source), K::Object(target)) => {
                let (source, target) = (source.clone(), target.clone());
                self.objects(types, &source, &target, to, depth)
            }
            (K::Map(values), K::Object(target)) => {
                let (values, target) = (*values, target.clone());
                if let Some(p) = target.properties.iter().find(|p| p.required) {
                    let reason = Reason::MissingProperty { name: p.name.clone(), maybe: true, target: to };
                    return Err(Misfit { path: Vec::new(), reason });
                }
                let mut fit = Fit::checked();
                for p in target.properties.iter() {
                    let seg = Segment::Key(p.name.clone());
                    fit = fit.and(self.fit_at(types, values, p.schema, depth).map_err(|m| m.under(seg))?);
                }
                Ok(fit)
            }
            _ => Err(kinds()),
        }
    }

    /// The best-ranked variants of `target` that accept `from`; equally ranked ones are ambiguous
    /// unless the value passes unchanged.
    fn onto_union(
        &mut self,
        types: &Types,
        from: SchemaId,
        target: SchemaId,
        variants: &[SchemaId],
        depth: usize,
    ) -> Verdict {
        let mut accepted: Vec<(SchemaId, Fit)> = Vec::new();
        let mut failures: Vec<(SchemaId, Misfit)> = Vec::new();
        for &variant in variants {
            match self.fit_at(types, from, variant, depth) {
                Ok(fit) => accepted.push((variant, fit)),
                Err(misfit) => failures.push((variant, misfit)),
            }
        }
        let Some(best) = accepted.iter().map(|(_, fit)| fit.rank).min() else {
            return Err(closest_failure(types, from, target, failures));
        };
        let tied: Vec<(SchemaId, Fit)> = accepted.into_iter().filter(|(_, fit)| fit.rank == best).collect();
        if best > Rank::Exact && tied.len() > 1 {
            let variants = tied.iter().map(|(v, _)| *v).collect();
            return Err(Misfit { path: Vec::new(), reason: Reason::Ambiguous { variants, rank: best } });
        }
        let checked = tied.iter().all(|(_, fit)| fit.checked);
        Ok(Fit { rank: best, checked })
    }

    fn objects(
        &mut self,
        types: &Types,
        source: &ObjectSchema,
        target: &ObjectSchema,
        target_id: SchemaId,
        depth: usize,
    ) -> Verdict {
        let mut fit = Fit::EXACT;
        for p in target.properties.iter() {
            let seg = Segment::Key(p.name.clone());
            match source.property(&p.name) {
                Some(s) if p.required && !s.required => {
                    let reason =
                        Reason::MissingProperty { name: p.name.clone(), maybe: true, target: target_id };
                    return Err(Misfit { path: Vec::new(), reason });
                }
                Some(s) => {
                    fit = fit.and(
                        self.property(types, s.schema, p.schema, p.required, depth)
                            .map_err(|m| m.under(seg))?,
                    )
                }
                None if p.required => {
                    let reason =
                        Reason::MissingProperty { name: p.name.clone(), maybe: false, target: target_id };
                    return Err(Misfit { path: Vec::new(), reason });
                }
                None => {}
            }
        }
        for s in source.properties.iter().filter(|s| target.property(&s.name).is_none()) {
            let seg = Segment::Key(s.name.clone());
            match target.additional {
                Some(additional) => {
                    fit = fit.and(self.fit_at(types, s.schema, additional, depth).map_err(|m| m.under(seg))?)
                }
                None => {
                    let reason = Reason::UndeclaredProperty { name: s.name.clone(), target: target_id };
                    return Err(Misfit { path: Vec::new(), reason });
                }
            }
        }
        match (source.additional, target.additional) {
            (Some(_), None) => fit = fit.and(Fit::checked()),
            (Some(from), Some(to)) => fit = fit.and(self.fit_at(types, from, to, depth)?),
            (None, _) => {}
        }
        Ok(fit)
    }

    /// One property: a null into an optional property that does not accept null drops the key
    /// (a structural adaptation, spec §3.3's Null row).
    fn property(
        &mut self,
        types: &Types,
        from: SchemaId,
        to: SchemaId,
        required: bool,
        depth: usize,
    ) -> Verdict {
        if required || types.admits_null(to) || !types.admits_null(from) {
            return self.fit_at(types, from, to, depth);
        }
        let mut fit = Fit { rank: Rank::Structural, checked: false };
        for variant in types.variants(from) {
            if !matches!(types.kind(variant), SchemaKind::Null) {
                fit = fit.and(self.fit_at(types, variant, to, depth)?);
            }
        }
        Ok(fit.at_least(Rank::Structural))
    }

    /// A path to a Bytes leaf a formatted value may contain.
    fn bytes_leaf(
        &mut self,
        types: &Types,
        id: SchemaId,
        path: &mut Vec<Segment>,
        depth: usize,
    ) -> Option<()> {
        self.steps += 1;
        if depth > MAX_DEPTH {
            return None;
        }
        let children: Vec<(Option<Segment>, SchemaId)> = match types.kind(id) {
            SchemaKind::Bytes => return Some(()),
            SchemaKind::List(list) => vec![(Some(Segment::Index(0)), list.items)],
            SchemaKind::Map(values) => vec![(None, *values)],
            SchemaKind::Object(object) => object
                .properties
                .iter()
                .map(|p| (Some(Segment::Key(p.name.clone())), p.schema))
                .chain(object.additional.map(|a| (None, a)))
                .collect(),
            SchemaKind::Union(union) => union.variants.iter().map(|&v| (None, v)).collect(),
            _ => return None,
        };
        for (segment, child) in children {
            let pushed = segment.is_some();
            path.extend(segment);
            if self.bytes_leaf(types, child, path, depth + 1).is_some() {
                return Some(());
            }
            if pushed {
                path.pop();
            }
        }
        None
    }
}

impl Misfit {
    /// The same misfit seen from one level up.
    fn under(mut self, segment: Segment) -> Misfit {
        self.path.insert(0, segment);
        self
    }
}

/// String to String: exact when every value the source allows is allowed; a runtime check when
/// the target enumerates values the source does not guarantee.
fn strings(from: Option<&[Arc<str>]>, to: Option<&[Arc<str>]>) -> Fit {
    match (from, to) {
        (_, None) => Fit::EXACT,
        (Some(from), Some(to)) if from.iter().all(|v| to.contains(v)) => Fit::EXACT,
        _ => Fit::checked(),
    }
}

/// The failure to report when no union variant accepts the value: the one variant of the same
/// kind when there is exactly one, else a plain kind mismatch against the whole union.
fn closest_failure(
    types: &Types,
    from: SchemaId,
    target: SchemaId,
    failures: Vec<(SchemaId, Misfit)>,
) -> Misfit {
    let same_kind: Vec<Misfit> = failures
        .into_iter()
        .filter(|(variant, misfit)| {
            std::mem::discriminant(types.kind(*variant)) == std::mem::discriminant(types.kind(from))
                || matches!(misfit.reason, Reason::NullToString | Reason::NumberToInteger | Reason::Bytes)
        })
        .map(|(_, misfit)| misfit)
        .collect();
    match <[Misfit; 1]>::try_from(same_kind) {
        Ok([only]) => only,
        Err(_) => Misfit { path: Vec::new(), reason: Reason::Kinds { from, to: target } },
    }
}
