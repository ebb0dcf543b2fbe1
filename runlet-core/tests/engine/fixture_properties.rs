//! Properties of fixture loading: arbitrary text and arbitrary fixture-shaped JSON never panic,
//! every finding points into the text with a fixture code, and well-formed files keep each case.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use runlet::diag::codes;
use runlet::scripted::ToolFixtures;

/// JSON built from the words fixture files use, so generated documents reach deep into the
/// loader rather than failing at the top.
fn fixture_like() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("args"),
        Just("result"),
        Just("error"),
        Just("times"),
        Just("delay_ms"),
        Just("code"),
        Just("message"),
        Just("retryable"),
        Just("retry_after_ms"),
        Just("details"),
        Just("crm.customer"),
        Just("x y"),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-3i64..3).prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[a-z.]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 5, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(key.clone(), inner, 0..5).prop_map(|fields| Value::Object(
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

/// A well-formed case.
fn case() -> impl Strategy<Value = Value> {
    let answer = prop_oneof![
        any::<i64>().prop_map(|n| json!({ "result": n })),
        ("[A-Z_]{1,8}", any::<bool>(), proptest::option::of(0u32..10_000)).prop_map(
            |(code, retryable, after)| {
                let mut error = json!({ "code": code, "message": "m", "retryable": retryable });
                if let Some(after) = after {
                    error["retry_after_ms"] = json!(after);
                }
                json!({ "error": error })
            }
        ),
    ];
    (
        answer,
        proptest::option::of(proptest::collection::vec(any::<i64>(), 0..3)),
        proptest::option::of(1u32..5),
        0u32..1000,
    )
        .prop_map(|(mut case, args, times, delay)| {
            if let Some(args) = args {
                case["args"] = json!(args);
            }
            if let Some(times) = times {
                case["times"] = json!(times);
            }
            case["delay_ms"] = json!(delay);
            case
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn loading_arbitrary_text_never_panics(text in "\\PC{0,64}") {
        let _ = ToolFixtures::from_json_str(&text);
    }

    #[test]
    fn loading_arbitrary_json_never_panics_and_reports_in_range(
        tools in proptest::collection::btree_map("[a-z]{1,3}(\\.[a-z]{1,3})?", fixture_like(), 0..4),
        wrap in any::<bool>(),
    ) {
        let tools: Map<String, Value> = tools.into_iter().collect();
        let document = if wrap { json!([tools]) } else { Value::Object(tools) };
        let text = serde_json::to_string_pretty(&document).expect("serializes");
        if let Err(error) = ToolFixtures::from_json_str(&text) {
            prop_assert!(!error.diagnostics.is_empty());
            for diagnostic in &error.diagnostics {
                prop_assert!((diagnostic.span.end as usize) <= text.len());
                prop_assert!((8201..=8203).contains(&diagnostic.code.number()) || diagnostic.code == codes::INVALID_HOST_JSON);
            }
        }
    }

    #[test]
    fn well_formed_files_keep_every_case(
        tools in proptest::collection::btree_map("tool_[a-z]{1,3}\\.[a-z]{1,3}", proptest::collection::vec(case(), 0..4), 0..4),
    ) {
        let text = serde_json::to_string(&tools).expect("serializes");
        let fixtures = ToolFixtures::from_json_str(&text).expect("well-formed fixtures load");
        for (name, cases) in &tools {
            let loaded = fixtures.cases(name);
            prop_assert_eq!(loaded.len(), cases.len());
            for (case, json) in loaded.iter().zip(cases) {
                prop_assert_eq!(case.times, json.get("times").and_then(Value::as_u64));
                prop_assert_eq!(case.delay.as_millis() as u64, json["delay_ms"].as_u64().expect("delay"));
                prop_assert_eq!(case.args.as_ref().map(|a| a.len()), json.get("args").and_then(Value::as_array).map(Vec::len));
            }
        }
    }
}
