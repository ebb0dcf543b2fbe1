//! Property tests for canonical values: RCVE round trip and injectivity, presentation JSON
//! parse-back, operator laws, total (panic-free) readers and operators, and label monotonicity.

mod value_support;

use proptest::prelude::*;
use runlet::value::{
    self, BinaryOp, ConversionLimits, Labelled, Labels, List, Number, Object, Segment, Sensitivity, Shape,
    Shapes, UnaryOp, Value,
};

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        proptest::num::f64::ANY.prop_filter_map("finite", Number::new),
        prop::sample::select(vec![0.0, -0.0, 0.1, 1e21, 5e-324, f64::MAX, f64::MIN, 1.0, -1.5])
            .prop_filter_map("finite", Number::new),
        (-(1i64 << 60)..(1i64 << 60)).prop_filter_map("finite", |i| Number::new(i as f64)),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["a", "b", "é", "😀", "", "$bytes"]).prop_map(String::from),
        ".{0,6}"
    ]
}

fn scalar(with_bytes: bool) -> BoxedStrategy<Value> {
    let base = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        prop::sample::select(vec![0, 1, -1, i64::MAX, i64::MIN, 1 << 53]).prop_map(Value::Int),
        number().prop_map(Value::Number),
        ".{0,12}".prop_map(Value::from),
    ];
    if with_bytes {
        prop_oneof![5 => base, 1 => prop::collection::vec(any::<u8>(), 0..20).prop_map(Value::bytes)].boxed()
    } else {
        base.boxed()
    }
}

fn value_tree(with_bytes: bool) -> BoxedStrategy<Value> {
    scalar(with_bytes)
        .prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|items| Value::List(List::new(items).expect("shallow"))),
                prop::collection::vec((key(), inner), 0..6).prop_map(|pairs| {
                    let pairs = pairs.into_iter().map(|(k, v)| (k.into(), v)).collect();
                    Value::Object(Object::from_pairs(pairs).expect("shallow"))
                }),
            ]
        })
        .boxed()
}

fn any_value() -> BoxedStrategy<Value> {
    value_tree(true)
}

fn object() -> impl Strategy<Value = Object> {
    prop::collection::vec((key(), any_value()), 0..6).prop_map(|pairs| {
        Object::from_pairs(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect()).expect("shallow")
    })
}

fn sensitivity() -> impl Strategy<Value = Sensitivity> {
    prop::sample::select(vec![Sensitivity::Public, Sensitivity::Sensitive, Sensitivity::Secret])
}

/// Every path into `value`, root first.
fn paths(value: &Value) -> Vec<Vec<Segment>> {
    let mut out = vec![vec![]];
    let children: Vec<(Segment, &Value)> = match value {
        Value::List(list) => list.iter().enumerate().map(|(i, v)| (Segment::Index(i), v)).collect(),
        Value::Object(object) => object.entries().iter().map(|(k, v)| (Segment::Key(k.clone()), v)).collect(),
        _ => vec![],
    };
    for (segment, child) in children {
        for mut path in paths(child) {
            path.insert(0, segment.clone());
            out.push(path);
        }
    }
    out
}

/// A value with labels on a few of its paths.
fn labelled() -> impl Strategy<Value = Labelled> {
    any_value().prop_flat_map(|value| {
        let all = paths(&value);
        prop::collection::vec((0..all.len(), sensitivity()), 0..3).prop_map(move |picks| {
            let labels = picks
                .into_iter()
                .fold(Labels::public(), |labels, (i, level)| labels.join(&Labels::at_path(&all[i], level)));
            Labelled::new(value.clone(), labels)
        })
    })
}

fn binary_op() -> impl Strategy<Value = BinaryOp> {
    prop::sample::select(vec![
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::In,
        BinaryOp::And,
        BinaryOp::Or,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn rcve_round_trips(v in any_value()) {
        prop_assert_eq!(value::rcve::decode(&value::rcve::encode(&v)), Ok(v));
    }

    #[test]
    fn rcve_is_injective(a in any_value(), b in any_value()) {
        prop_assert_eq!(value::rcve::encode(&a) == value::rcve::encode(&b), a == b);
        prop_assert_eq!(value::sha256(&a) == value::sha256(&b), a == b);
    }

    #[test]
    fn presentation_json_parses_back_without_bytes(v in value_tree(false)) {
        let json = value::to_presentation_json(&v).expect("no bytes inside");
        prop_assume!(!value_support::has_large_integral_number(&v));
        let parsed = value::parse_json(&json).expect("presentation JSON is valid host JSON");
        prop_assert!(value::equals(&parsed, &v), "{} parsed as {:?}", json, parsed);
        prop_assert_eq!(value::to_presentation_json(&parsed).expect("no bytes inside"), json);
    }

    #[test]
    fn merge_is_associative(a in object(), b in object(), c in object()) {
        prop_assert_eq!(a.merge(&b).merge(&c), a.merge(&b.merge(&c)));
        let right_wins = a.merge(&b);
        for (k, v) in b.entries() {
            prop_assert_eq!(right_wins.get(k), Some(v));
        }
        let deepest = right_wins.entries().iter().map(|(_, v)| v.depth()).max().unwrap_or(0);
        prop_assert_eq!(right_wins.depth(), 1 + deepest);
    }

    #[test]
    fn concatenation_is_associative(a in any_value(), b in any_value(), c in any_value()) {
        let list = |v: Value| Value::List(List::new(vec![v]).expect("shallow"));
        let (a, b, c) = (list(a), list(b), list(c));
        let left = value::binary(BinaryOp::Add, &value::binary(BinaryOp::Add, &a, &b).expect("lists"), &c);
        let right = value::binary(BinaryOp::Add, &a, &value::binary(BinaryOp::Add, &b, &c).expect("lists"));
        prop_assert_eq!(left, right);
    }

    #[test]
    fn equality_is_reflexive_symmetric_and_implied_by_identity(a in any_value(), b in any_value()) {
        prop_assert!(value::equals(&a, &a));
        prop_assert_eq!(value::equals(&a, &b), value::equals(&b, &a));
        let copy = value::rcve::decode(&value::rcve::encode(&b)).expect("round trip");
        prop_assert!(value::equals(&b, &copy));
        if a == b {
            prop_assert!(value::equals(&a, &b));
        }
    }

    #[test]
    fn operators_never_panic_and_fail_with_runtime_codes(op in binary_op(), a in any_value(), b in any_value()) {
        if let Err(error) = value::binary(op, &a, &b) {
            prop_assert!(error.code().number() / 1000 == 5, "{}", error);
        }
        for unary in [UnaryOp::Neg, UnaryOp::Not] {
            if let Err(error) = value::unary(unary, &a) {
                prop_assert!(error.code().number() / 1000 == 5, "{}", error);
            }
        }
        if let Err(error) = value::index(&a, &b) {
            prop_assert!(error.code().number() / 1000 == 5, "{}", error);
        }
    }

    #[test]
    fn readers_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64), text in ".{0,40}") {
        let _ = value::rcve::decode(&bytes);
        let _ = value::parse_json(&text);
        let _ = value::parse_json_bytes(&bytes);
    }

    #[test]
    fn decoding_accepts_only_canonical_bytes(v in any_value(), flip in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut bytes = value::rcve::encode(&v);
        let at = flip.index(bytes.len());
        bytes[at] ^= 1 << bit;
        if let Ok(decoded) = value::rcve::decode(&bytes) {
            prop_assert_eq!(value::rcve::encode(&decoded), bytes);
        }
    }

    #[test]
    fn sensitivity_never_decreases_through_operators(op in binary_op(), a in labelled(), b in labelled()) {
        let strongest = a.max_sensitivity().max(b.max_sensitivity());
        match a.binary(op, &b) {
            Ok(result) => {
                let structural = op == BinaryOp::Add
                    && matches!((a.value(), b.value()), (Value::List(_), Value::List(_)) | (Value::Object(_), Value::Object(_)));
                if structural {
                    prop_assert!(result.labels().level() >= a.labels().level().max(b.labels().level()));
                    // Every labelled path of the right operand survives at its position.
                    let offset = match a.value() { Value::List(l) => l.len(), _ => 0 };
                    for (path, level) in b.labels().paths() {
                        let mut moved = path.clone();
                        if let Some(Segment::Index(i)) = moved.first_mut() { *i += offset; }
                        prop_assert!(result.labels().level_at(&moved) >= level);
                    }
                } else {
                    prop_assert_eq!(result.max_sensitivity(), strongest);
                }
            }
            Err(error) => prop_assert_eq!(error.sensitivity(), strongest),
        }
    }

    #[test]
    fn sensitivity_never_decreases_through_projection_and_composites(
        target in labelled(), index in any::<i64>(), key in key(), label in sensitivity(),
    ) {
        for selector in [Labelled::uniform(Value::Int(index % 8), label), Labelled::uniform(Value::from(key.as_str()), label)] {
            match target.index(&selector) {
                Ok(found) => prop_assert!(found.labels().level() >= label.max(target.labels().level())),
                Err(error) => prop_assert!(error.sensitivity() >= label.max(target.max_sensitivity())),
            }
        }
        let wrapped = Labelled::list(vec![target.clone()]).expect("shallow");
        for (path, level) in target.labels().paths() {
            let mut inner = vec![Segment::Index(0)];
            inner.extend(path.clone());
            prop_assert!(wrapped.labels().level_at(&inner) >= level);
        }
        prop_assert_eq!(wrapped.max_sensitivity(), target.max_sensitivity());
        if let Ok(text) = target.presentation_json() {
            prop_assert_eq!(text.max_sensitivity(), target.max_sensitivity());
        }
        let redacted = target.redacted(Sensitivity::Public);
        if target.max_sensitivity() == Sensitivity::Public {
            prop_assert_eq!(&redacted, target.value());
        }
    }

    #[test]
    fn sensitivity_never_decreases_through_conversions(target in labelled(), label in sensitivity()) {
        let mut shapes = Shapes::new();
        let any = shapes.add(Shape::Any);
        let labelled_any = shapes.add_labelled(Shape::Any, label);
        let string = shapes.add(Shape::String);
        let limits = ConversionLimits::default();
        let (same, _) = target.convert(any, &shapes, &limits).expect("Any accepts every value");
        prop_assert_eq!(&same, &target);
        let (raised, _) = target.convert(labelled_any, &shapes, &limits).expect("Any accepts every value");
        prop_assert_eq!(raised.labels(), &target.labels().raised(label));
        match target.convert(string, &shapes, &limits) {
            Ok((text, _)) if !matches!(target.value(), Value::String(_)) => {
                prop_assert_eq!(text.labels(), &Labels::uniform(target.max_sensitivity()));
            }
            Ok((text, _)) => prop_assert_eq!(&text, &target),
            Err(error) => prop_assert_eq!(error.sensitivity(), target.max_sensitivity()),
        }
    }
}
