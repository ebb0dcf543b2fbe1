//! Property tests of the intrinsics, called directly: JSON and time round trips, split/join and
//! slice laws, sort and unique invariants, and patterns of any text compiling or failing cleanly.

use proptest::prelude::*;
use runlet::diag::codes;
use runlet::stdlib::{PureFunction, compile_regex};
use runlet::value::{List, Number, Object, Value, equals};

#[path = "../value_support/mod.rs"]
mod value_support;

fn call(function: PureFunction, args: Vec<Value>) -> Result<Value, String> {
    function.evaluate(&args).map_err(|e| e.code().to_string())
}

fn strings(items: &[String]) -> Value {
    Value::List(List::new(items.iter().map(|s| Value::from(s.as_str())).collect()).expect("flat"))
}

fn json_value() -> BoxedStrategy<Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        proptest::num::f64::ANY.prop_filter_map("finite", Number::new).prop_map(Value::Number),
        ".{0,8}".prop_map(Value::from),
    ];
    scalar
        .prop_recursive(3, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| Value::List(List::new(items).expect("shallow"))),
                prop::collection::btree_map(".{0,4}", inner, 0..5).prop_map(|pairs| {
                    let pairs = pairs.into_iter().map(|(k, v)| (k.into(), v)).collect();
                    Value::Object(Object::from_pairs(pairs).expect("distinct keys"))
                }),
            ]
        })
        .boxed()
}

proptest! {
    #[test]
    fn json_parse_reads_back_what_json_stringify_writes(value in json_value()) {
        prop_assume!(!value_support::has_large_integral_number(&value));
        let text = call(PureFunction::JsonStringify, vec![value.clone()]).expect("JSON-representable");
        let back = call(PureFunction::JsonParse, vec![text]).expect("reads back");
        prop_assert!(equals(&back, &value), "{back:?} != {value:?}");
    }

    #[test]
    fn time_parse_inverts_time_format(millis in -62_167_219_200_000i64..=253_402_300_799_999) {
        let text = call(PureFunction::TimeFormat, vec![Value::Int(millis)]).expect("in range");
        prop_assert_eq!(call(PureFunction::TimeParse, vec![text]), Ok(Value::Int(millis)));
    }

    #[test]
    fn joining_the_split_parts_gives_the_text_back(text in ".{0,24}", separator in ".{1,3}") {
        let parts = call(PureFunction::TextSplit, vec![Value::from(text.as_str()), Value::from(separator.as_str())]).expect("splits");
        let joined = call(PureFunction::TextJoin, vec![parts, Value::from(separator.as_str())]).expect("joins");
        prop_assert_eq!(joined, Value::from(text.as_str()));
    }

    #[test]
    fn text_slice_follows_python_slices(text in ".{0,12}", start in -15i64..15, end in proptest::option::of(-15i64..15)) {
        let chars: Vec<char> = text.chars().collect();
        let length = chars.len() as i64;
        let clamp = |p: i64| (if p < 0 { length + p } else { p }).clamp(0, length) as usize;
        let (from, to) = (clamp(start), end.map_or(chars.len(), clamp));
        let expected: String = if to > from { chars[from..to].iter().collect() } else { String::new() };
        let mut args = vec![Value::from(text.as_str()), Value::Int(start)];
        args.extend(end.map(Value::Int));
        prop_assert_eq!(call(PureFunction::TextSlice, args), Ok(Value::from(expected.as_str())));
    }

    #[test]
    fn sorting_orders_a_permutation(items in prop::collection::vec(".{0,4}", 0..12)) {
        let sorted = call(PureFunction::ListSort, vec![strings(&items)]).expect("strings sort");
        let mut expected = items.clone();
        expected.sort();
        prop_assert_eq!(sorted, strings(&expected));
    }

    #[test]
    fn unique_keeps_first_occurrences_and_is_idempotent(items in prop::collection::vec(0i64..5, 0..12)) {
        let list = Value::List(List::new(items.iter().copied().map(Value::Int).collect()).expect("flat"));
        let once = call(PureFunction::ListUnique, vec![list]).expect("unique");
        let twice = call(PureFunction::ListUnique, vec![once.clone()]).expect("unique");
        let mut seen = Vec::new();
        for item in items {
            if !seen.contains(&item) {
                seen.push(item);
            }
        }
        prop_assert_eq!(&once, &Value::List(List::new(seen.into_iter().map(Value::Int).collect()).expect("flat")));
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn any_pattern_compiles_or_fails_with_invalid_regex(pattern in "[a-z()\\[\\]{}*+?|\\\\^$.0-9,]{0,16}") {
        if let Err(error) = compile_regex(&pattern) {
            prop_assert_eq!(error.code(), codes::INVALID_REGEX);
        }
    }

    #[test]
    fn number_parse_reads_canonical_number_text(value in proptest::num::f64::ANY.prop_filter_map("finite", Number::new)) {
        let text = call(PureFunction::JsonStringify, vec![Value::Number(value)]).expect("formats");
        let Value::String(text) = text else { panic!("a string") };
        prop_assert_eq!(call(PureFunction::NumberParse, vec![Value::from(&*text)]), Ok(Value::Number(value)));
    }
}
