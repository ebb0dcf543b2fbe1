//! Runtime conversions (spec §3.3): exact matches, lossless structural adaptation, canonical
//! formatting to String within byte and depth limits — with sensitivity labels carried along.

use super::arith::inexact_widening;
use super::error::ValueError;
use super::format::scalar_text;
use super::json_out::write_presentation_json;
use super::model::{List, MAX_DEPTH, Object, Value};
use super::number::Number;
use super::sensitivity::{Labels, Segment, path_text};
use super::shape::{ObjectShape, Shape, ShapeId, Shapes};
use crate::diag::codes;

/// The conversion ranks of spec §3.3, best first. A conversion's rank is the worst rank used
/// anywhere inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rank {
    /// The value already has the target shape.
    Exact = 1,
    /// Integer → Number (exact only), dropping a null optional property, element-wise changes.
    Structural = 2,
    /// Canonical formatting of a scalar or a composite to String.
    Formatting = 3,
}

/// The host-configurable bounds of one conversion (maxima are inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConversionLimits {
    /// The deepest value a conversion accepts (`conversion_depth`); at most [`MAX_DEPTH`].
    pub max_depth: usize,
    /// The longest canonical text a composite may format to (`conversion_bytes`).
    pub max_bytes: usize,
}

impl Default for ConversionLimits {
    /// No limit beyond the value depth ceiling.
    fn default() -> Self {
        ConversionLimits { max_depth: MAX_DEPTH, max_bytes: usize::MAX }
    }
}

/// A converted value, its labels and the rank of the conversion.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    pub value: Value,
    pub labels: Labels,
    pub rank: Rank,
}

/// Converts `value` (labelled by `labels`) to the shape `target` of `shapes`.
///
/// Labels follow the value: elements keep their paths' labels, formatting to String gives the
/// string the strongest label inside, and each target node's own sensitivity raises the label
/// of everything converted to it. A failure carries the sensitivity of the whole input.
pub fn convert(
    value: &Value,
    labels: &Labels,
    target: ShapeId,
    shapes: &Shapes,
    limits: &ConversionLimits,
) -> Result<Converted, ValueError> {
    let max_depth = limits.max_depth.min(MAX_DEPTH);
    if value.depth() > max_depth {
        return Err(ValueError::new(
            codes::CONVERSION_DEPTH_EXCEEDED,
            format!("the value nests {} levels deep; conversions accept at most {max_depth}", value.depth()),
        )
        .with_detail("limit", "conversion_depth")
        .with_detail("current", value.depth() as i64)
        .with_detail("cap", max_depth as i64)
        .with_sensitivity(labels.max()));
    }
    let mut converter = Converter { shapes, max_bytes: limits.max_bytes, path: Vec::new() };
    converter
        .convert(value, labels, target, shapes.len())
        .map(|(value, labels, rank)| Converted { value, labels, rank })
        .map_err(|error| error.with_sensitivity(labels.max()))
}

struct Converter<'a> {
    shapes: &'a Shapes,
    max_bytes: usize,
    /// The path of the value being converted, for error details.
    path: Vec<Segment>,
}

type Step = Result<(Value, Labels, Rank), ValueError>;

impl Converter<'_> {
    /// `union_hops` bounds how many unions may be entered without descending into the value, so
    /// a union that contains itself cannot loop.
    fn convert(&mut self, value: &Value, labels: &Labels, target: ShapeId, union_hops: usize) -> Step {
        let Some(node) = self.shapes.get(target) else { return Err(self.unsupported(value, target)) };
        let labels = labels.raised(node.sensitivity);
        let exact = |v: &Value| Ok((v.clone(), labels.clone(), Rank::Exact));
        match (&node.shape, value) {
            (Shape::Any, _)
            | (Shape::Null, Value::Null)
            | (Shape::Boolean, Value::Bool(_))
            | (Shape::Integer, Value::Int(_))
            | (Shape::Number, Value::Number(_))
            | (Shape::String, Value::String(_))
            | (Shape::Bytes, Value::Bytes(_)) => exact(value),
            (Shape::Number, Value::Int(i)) => match Number::from_i64_exact(*i) {
                Some(n) => Ok((Value::Number(n), labels, Rank::Structural)),
                None => Err(inexact_widening(*i).with_detail("path", path_text(&self.path))),
            },
            (Shape::String, Value::Int(_) | Value::Number(_) | Value::Bool(_)) => {
                let text = scalar_text(value).unwrap_or_default();
                Ok((Value::string(text), labels.flattened(), Rank::Formatting))
            }
            (Shape::String, Value::List(_) | Value::Object(_)) => {
                let mut text = String::new();
                write_presentation_json(value, &mut text, self.max_bytes)
                    .map_err(|error| error.with_detail("at", path_text(&self.path)))?;
                Ok((Value::string(text), labels.flattened(), Rank::Formatting))
            }
            (Shape::List(items), Value::List(list)) => self.list(list, &labels, *items),
            (Shape::Map(values), Value::Object(object)) => {
                self.entries(object, &labels, |_| Some(*values), |_, _| true)
            }
            (Shape::Object(shape), Value::Object(object)) => self.object(object, &labels, shape),
            (Shape::Union(variants), _) if union_hops > 0 => {
                self.union(value, &labels, target, variants, union_hops)
            }
            _ => Err(self.unsupported(value, target)),
        }
    }

    fn list(&mut self, list: &List, labels: &Labels, items: ShapeId) -> Step {
        let mut rank = Rank::Exact;
        let mut converted = Vec::with_capacity(list.len());
        let mut children = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let segment = Segment::Index(i);
            self.path.push(segment.clone());
            let (value, item_labels, item_rank) =
                self.convert(item, &labels.child(&segment), items, self.shapes.len())?;
            self.path.pop();
            rank = rank.max(item_rank);
            converted.push(value);
            children.push((segment, item_labels));
        }
        let labels = Labels::composite(labels.level(), children);
        if rank == Rank::Exact {
            return Ok((Value::List(list.clone()), labels, rank));
        }
        Ok((Value::List(List::new(converted)?), labels, rank))
    }

    fn object(&mut self, object: &Object, labels: &Labels, shape: &ObjectShape) -> Step {
        if let Some(missing) = shape.properties().iter().find(|p| p.required && !object.contains_key(&p.name))
        {
            let mut path = self.path.clone();
            path.push(Segment::Key(missing.name.clone()));
            return Err(ValueError::new(
                codes::MISSING_REQUIRED_PROPERTY,
                format!("required property `{}` is missing", missing.name),
            )
            .with_detail("property", Value::String(missing.name.clone()))
            .with_detail("path", path_text(&path)));
        }
        let shapes = self.shapes;
        self.entries(
            object,
            labels,
            |key| shape.property(key).map(|p| p.shape).or(shape.additional()),
            // Null into an optional property that does not accept null drops the key.
            |key, value| match shape.property(key) {
                Some(p) => p.required || *value != Value::Null || shapes.accepts_null(p.shape),
                None => true,
            },
        )
    }

    /// Converts every entry of `object` to the shape `shape_of(key)` (`None` means the key is
    /// not allowed: `RL5303`), dropping the entries `keep` rejects.
    fn entries(
        &mut self,
        object: &Object,
        labels: &Labels,
        shape_of: impl Fn(&str) -> Option<ShapeId>,
        keep: impl Fn(&str, &Value) -> bool,
    ) -> Step {
        let mut rank = Rank::Exact;
        let mut converted = Vec::with_capacity(object.len());
        let mut children = Vec::new();
        for (key, item) in object.entries() {
            if !keep(key, item) {
                rank = rank.max(Rank::Structural);
                continue;
            }
            let segment = Segment::Key(key.clone());
            self.path.push(segment.clone());
            let Some(item_shape) = shape_of(key) else {
                let error = ValueError::new(
                    codes::UNEXPECTED_PROPERTY,
                    format!("property `{key}` is not declared by the target object"),
                )
                .with_detail("property", Value::String(key.clone()))
                .with_detail("path", path_text(&self.path));
                return Err(error);
            };
            let (value, item_labels, item_rank) =
                self.convert(item, &labels.child(&segment), item_shape, self.shapes.len())?;
            self.path.pop();
            rank = rank.max(item_rank);
            converted.push((key.clone(), value));
            children.push((segment, item_labels));
        }
        let labels = Labels::composite(labels.level(), children);
        if rank == Rank::Exact {
            return Ok((Value::Object(object.clone()), labels, rank));
        }
        Ok((Value::Object(Object::from_pairs(converted)?), labels, rank))
    }

    /// The best-ranked variant that accepts the value; equally ranked variants must agree. A list
    /// or object that a variant of its own kind rejects is not rescued by formatting it into a
    /// String variant: a malformed list is an error, never a JSON string the tool did not expect.
    fn union(
        &mut self,
        value: &Value,
        labels: &Labels,
        target: ShapeId,
        variants: &[ShapeId],
        hops: usize,
    ) -> Step {
        let mut best: Option<(Value, Labels, Rank)> = None;
        let mut ambiguous = false;
        let mut specific_failures = Vec::new();
        let path_len = self.path.len();
        let here = Value::string(path_text(&self.path));
        let mut attempts = Vec::with_capacity(variants.len());
        for &variant in variants {
            attempts.push((variant, self.convert(value, labels, variant, hops - 1)));
            // A failed attempt returns early from inside the value; drop its path segments.
            self.path.truncate(path_len);
        }
        let own_kind_failed =
            attempts.iter().any(|(variant, attempt)| attempt.is_err() && self.of_own_kind(value, *variant));
        for (variant, attempt) in attempts {
            if own_kind_failed && self.is_string(variant) {
                continue;
            }
            match attempt {
                Ok(candidate) => match &best {
                    Some(current) if candidate.2 > current.2 => {}
                    Some(current) if candidate.2 == current.2 => {
                        ambiguous |= candidate.0 != current.0;
                        if candidate.1 != current.1 {
                            best = Some((candidate.0, current.1.join(&candidate.1), candidate.2));
                        }
                    }
                    _ => {
                        ambiguous = false;
                        best = Some(candidate);
                    }
                },
                // A variant whose kind does not match at all says nothing; a failure further
                // inside (or of another kind) says what is wrong with a plausible variant.
                Err(error)
                    if error.code() != codes::UNSUPPORTED_CONVERSION
                        || error.details().get("path") != Some(&here) =>
                {
                    specific_failures.push(error)
                }
                Err(_) => {}
            }
        }
        match best {
            Some(_) if ambiguous => Err(ValueError::new(
                codes::AMBIGUOUS_CONVERSION,
                format!(
                    "several variants of `{}` accept this {} equally well with different results",
                    self.shapes.name(target),
                    value.kind()
                ),
            )
            .with_detail("to", self.shapes.name(target))
            .with_detail("path", path_text(&self.path))),
            Some(best) => Ok(best),
            None if specific_failures.len() == 1 => Err(specific_failures.remove(0)),
            None => Err(self.unsupported(value, target)),
        }
    }

    /// Whether `variant` is the kind of the composite `value`: a list shape for a list, an
    /// object or map shape for an object.
    fn of_own_kind(&self, value: &Value, variant: ShapeId) -> bool {
        let shape = self.shapes.get(variant).map(|node| &node.shape);
        match value {
            Value::List(_) => matches!(shape, Some(Shape::List(_))),
            Value::Object(_) => matches!(shape, Some(Shape::Object(_) | Shape::Map(_))),
            _ => false,
        }
    }

    fn is_string(&self, variant: ShapeId) -> bool {
        self.shapes.get(variant).is_some_and(|node| matches!(node.shape, Shape::String))
    }

    /// `RL5301`: the value's kind does not convert to the target.
    fn unsupported(&self, value: &Value, target: ShapeId) -> ValueError {
        let to = self.shapes.name(target);
        let hint = match value {
            Value::Null => "; use `value if value != null else fallback`",
            Value::Bytes(_) => "; Bytes need an explicit encoding",
            _ => "",
        };
        ValueError::new(
            codes::UNSUPPORTED_CONVERSION,
            format!("cannot convert {} to {to}{hint}", value.kind()),
        )
        .with_detail("from", value.kind().name())
        .with_detail("to", to)
        .with_detail("path", path_text(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Code;
    use crate::value::sensitivity::Sensitivity;
    use crate::value::shape::PropertyShape;
    use crate::value::test_values::{list, num, object};

    fn property(name: &str, shape: ShapeId, required: bool) -> PropertyShape {
        PropertyShape { name: name.into(), shape, required }
    }

    fn run(value: Value, target: ShapeId, shapes: &Shapes) -> Result<(Value, Rank), Code> {
        convert(&value, &Labels::public(), target, shapes, &ConversionLimits::default())
            .map(|c| (c.value, c.rank))
            .map_err(|e| e.code())
    }

    /// The error converting `value` to `target`, which must fail.
    fn failure(value: &Value, target: ShapeId, shapes: &Shapes) -> ValueError {
        convert(value, &Labels::public(), target, shapes, &ConversionLimits::default()).expect_err("fails")
    }

    #[test]
    fn scalar_rows_of_the_matrix() {
        let mut shapes = Shapes::new();
        let number = shapes.add(Shape::Number);
        let integer = shapes.add(Shape::Integer);
        let string = shapes.add(Shape::String);
        let any = shapes.add(Shape::Any);
        assert_eq!(run(3.into(), integer, &shapes), Ok((3.into(), Rank::Exact)));
        assert_eq!(run(3.into(), number, &shapes), Ok((num(3.0), Rank::Structural)));
        assert_eq!(run(((1i64 << 53) + 1).into(), number, &shapes), Err(codes::INEXACT_INTEGER_WIDENING));
        assert_eq!(run(num(4.7), integer, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
        assert_eq!(run("4".into(), integer, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
        assert_eq!(run(42.into(), string, &shapes), Ok(("42".into(), Rank::Formatting)));
        assert_eq!(run(num(-0.0), string, &shapes), Ok(("0".into(), Rank::Formatting)));
        assert_eq!(run(false.into(), string, &shapes), Ok(("false".into(), Rank::Formatting)));
        assert_eq!(run(Value::Null, string, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
        assert_eq!(run(Value::bytes(vec![1]), string, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
        assert_eq!(run(Value::bytes(vec![1]), any, &shapes), Ok((Value::bytes(vec![1]), Rank::Exact)));
        let error = convert(&Value::Null, &Labels::public(), string, &shapes, &ConversionLimits::default())
            .expect_err("null is not a string");
        assert_eq!(error.details().get("from"), Some(&"Null".into()));
        assert_eq!(error.details().get("to"), Some(&"String".into()));
    }

    #[test]
    fn composites_format_as_canonical_json_within_limits() {
        let mut shapes = Shapes::new();
        let string = shapes.add(Shape::String);
        let value = object(vec![("b", list(vec![1.into(), Value::Null])), ("a", num(0.5))]);
        assert_eq!(
            run(value.clone(), string, &shapes),
            Ok((r#"{"a":0.5,"b":[1,null]}"#.into(), Rank::Formatting))
        );
        let tight = ConversionLimits { max_bytes: 10, ..ConversionLimits::default() };
        let error = convert(&value, &Labels::public(), string, &shapes, &tight).expect_err("too long");
        assert_eq!(error.code(), codes::CONVERSION_BYTES_EXCEEDED);
        let shallow = ConversionLimits { max_depth: 1, ..ConversionLimits::default() };
        let error = convert(&value, &Labels::public(), string, &shapes, &shallow).expect_err("too deep");
        assert_eq!(error.code(), codes::CONVERSION_DEPTH_EXCEEDED);
        assert_eq!(error.details().get("current"), Some(&Value::Int(2)));
        let hidden_bytes = list(vec![object(vec![("k", Value::bytes(vec![0]))])]);
        let error = convert(&hidden_bytes, &Labels::public(), string, &shapes, &ConversionLimits::default())
            .expect_err("bytes leaf");
        assert_eq!(error.code(), codes::NOT_JSON_REPRESENTABLE);
        assert_eq!(error.details().get("path"), Some(&r#"$[0]["k"]"#.into()));
    }

    #[test]
    fn lists_and_maps_convert_element_wise() {
        let mut shapes = Shapes::new();
        let number = shapes.add(Shape::Number);
        let numbers = shapes.add(Shape::List(number));
        let number_map = shapes.add(Shape::Map(number));
        let exact = list(vec![num(1.5)]);
        let (converted, rank) = run(exact.clone(), numbers, &shapes).expect("exact");
        assert_eq!((&converted, rank), (&exact, Rank::Exact));
        assert_eq!(
            run(list(vec![1.into(), num(2.5)]), numbers, &shapes),
            Ok((list(vec![num(1.0), num(2.5)]), Rank::Structural))
        );
        let error = convert(
            &list(vec![1.into(), "x".into()]),
            &Labels::public(),
            numbers,
            &shapes,
            &ConversionLimits::default(),
        )
        .expect_err("string element");
        assert_eq!(error.details().get("path"), Some(&"$[1]".into()));
        assert_eq!(
            run(object(vec![("a", 1.into())]), number_map, &shapes),
            Ok((object(vec![("a", num(1.0))]), Rank::Structural))
        );
        assert_eq!(run(list(vec![]), number_map, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
    }

    #[test]
    fn objects_need_required_properties_and_drop_null_optionals() {
        let mut shapes = Shapes::new();
        let string = shapes.add(Shape::String);
        let null = shapes.add(Shape::Null);
        let nullable = shapes.add(Shape::Union(vec![string, null]));
        let target = shapes.add(Shape::Object(ObjectShape::new(
            vec![
                property("id", string, true),
                property("note", string, false),
                property("tag", nullable, false),
            ],
            None,
        )));
        assert_eq!(
            run(
                object(vec![("id", "x".into()), ("note", Value::Null), ("tag", Value::Null)]),
                target,
                &shapes
            ),
            Ok((object(vec![("id", "x".into()), ("tag", Value::Null)]), Rank::Structural))
        );
        assert_eq!(
            run(object(vec![("note", "n".into())]), target, &shapes),
            Err(codes::MISSING_REQUIRED_PROPERTY)
        );
        assert_eq!(
            run(object(vec![("id", "x".into()), ("extra", 1.into())]), target, &shapes),
            Err(codes::UNEXPECTED_PROPERTY)
        );
        assert_eq!(
            run(object(vec![("id", Value::Null)]), target, &shapes),
            Err(codes::UNSUPPORTED_CONVERSION)
        );
        let open =
            shapes.add(Shape::Object(ObjectShape::new(vec![property("id", string, true)], Some(string))));
        assert_eq!(
            run(object(vec![("id", "x".into()), ("n", 2.into())]), open, &shapes),
            Ok((object(vec![("id", "x".into()), ("n", "2".into())]), Rank::Formatting))
        );
    }

    #[test]
    fn unions_take_the_best_rank_and_refuse_ties_that_disagree() {
        let mut shapes = Shapes::new();
        let integer = shapes.add(Shape::Integer);
        let number = shapes.add(Shape::Number);
        let string = shapes.add(Shape::String);
        let bytes = shapes.add(Shape::Bytes);
        let strings = shapes.add(Shape::List(string));
        let int_or_number = shapes.add(Shape::Union(vec![number, integer]));
        assert_eq!(run(3.into(), int_or_number, &shapes), Ok((3.into(), Rank::Exact)));
        let string_or_list = shapes.add(Shape::Union(vec![strings, string]));
        assert_eq!(run(3.into(), string_or_list, &shapes), Ok(("3".into(), Rank::Formatting)));
        let number_or_string = shapes.add(Shape::Union(vec![string, number]));
        assert_eq!(run(3.into(), number_or_string, &shapes), Ok((num(3.0), Rank::Structural)));
        let tie = shapes.add(Shape::Union(vec![strings, string]));
        assert_eq!(run(list(vec![1.into()]), tie, &shapes), Err(codes::AMBIGUOUS_CONVERSION));
        let none = shapes.add(Shape::Union(vec![bytes, integer]));
        assert_eq!(run("x".into(), none, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
        let widen_fails = shapes.add(Shape::Union(vec![bytes, number]));
        assert_eq!(run(i64::MAX.into(), widen_fails, &shapes), Err(codes::INEXACT_INTEGER_WIDENING));
        let int_list = shapes.add(Shape::List(integer));
        let list_or_string = shapes.add(Shape::Union(vec![int_list, bytes]));
        let error = failure(&list(vec![1.into(), "x".into()]), list_or_string, &shapes);
        assert_eq!(error.details().get("path"), Some(&"$[1]".into()));
        let error =
            convert(&"x".into(), &Labels::public(), list_or_string, &shapes, &ConversionLimits::default())
                .expect_err("neither variant");
        assert_eq!(
            (error.code(), error.details().get("to")),
            (codes::UNSUPPORTED_CONVERSION, Some(&"List | Bytes".into()))
        );
        let int_list_or_string = shapes.add(Shape::Union(vec![string, int_list]));
        // A list the list variant rejects is not formatted into the string variant.
        let error = failure(&list(vec![1.into(), "x".into()]), int_list_or_string, &shapes);
        assert_eq!(
            (error.code(), error.details().get("path")),
            (codes::UNSUPPORTED_CONVERSION, Some(&"$[1]".into()))
        );
        assert_eq!(
            run(list(vec![1.into()]), int_list_or_string, &shapes),
            Ok((list(vec![1.into()]), Rank::Exact))
        );
        let closed = shapes.add(Shape::Object(ObjectShape::new(vec![property("id", integer, true)], None)));
        let object_or_string = shapes.add(Shape::Union(vec![closed, string]));
        assert_eq!(
            run(object(vec![("id", "x".into())]), object_or_string, &shapes),
            Err(codes::UNSUPPORTED_CONVERSION)
        );
        assert_eq!(run(object(vec![]), object_or_string, &shapes), Err(codes::MISSING_REQUIRED_PROPERTY));
        assert_eq!(run(3.into(), object_or_string, &shapes), Ok(("3".into(), Rank::Formatting)));
        let looping = shapes.declare();
        shapes.define(looping, Shape::Union(vec![looping]), Sensitivity::Public);
        assert_eq!(run(1.into(), looping, &shapes), Err(codes::UNSUPPORTED_CONVERSION));
    }

    #[test]
    fn labels_follow_the_conversion() {
        let mut shapes = Shapes::new();
        let string = shapes.add(Shape::String);
        let secret_string = shapes.add_labelled(Shape::String, Sensitivity::Secret);
        let number = shapes.add(Shape::Number);
        let target = shapes.add(Shape::Object(ObjectShape::new(
            vec![property("token", secret_string, true), property("n", number, true)],
            None,
        )));
        let value = object(vec![("token", "t".into()), ("n", 1.into())]);
        let labels = Labels::at_path(&[Segment::Key("n".into())], Sensitivity::Sensitive);
        let converted =
            convert(&value, &labels, target, &shapes, &ConversionLimits::default()).expect("converts");
        assert_eq!(converted.labels.level_at(&[Segment::Key("token".into())]), Sensitivity::Secret);
        assert_eq!(converted.labels.level_at(&[Segment::Key("n".into())]), Sensitivity::Sensitive);
        assert_eq!(converted.labels.level(), Sensitivity::Public);
        let formatted =
            convert(&value, &labels, string, &shapes, &ConversionLimits::default()).expect("formats");
        assert_eq!(formatted.labels, Labels::uniform(Sensitivity::Sensitive));
        let error =
            convert(&value, &labels, number, &shapes, &ConversionLimits::default()).expect_err("object");
        assert_eq!(error.sensitivity(), Sensitivity::Sensitive);
    }
}
