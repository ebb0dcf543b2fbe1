//! Checks the language-neutral value fixtures under `conformance/values/v1/`: RCVE bytes, decoding,
//! presentation JSON and SHA-256 digests of every case, and the decoder's rejections.

mod value_support;

use std::fs;
use std::path::{Path, PathBuf};

use runlet::diag::codes;
use runlet::value::{self, Number, Object, Value};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/values/v1")
}

/// Every `*.json` file directly in `dir`, sorted, with its parsed contents.
fn fixture_files(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures in {}", dir.display());
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("fixture text");
            let Value::List(cases) = value::parse_json(&text).expect("fixture JSON") else {
                panic!("{} must be a JSON array", path.display())
            };
            (path.file_name().expect("file name").to_string_lossy().into_owned(), cases.items().to_vec())
        })
        .collect()
}

fn field<'a>(case: &'a Value, name: &str) -> &'a Value {
    let Value::Object(object) = case else { panic!("a case must be an object: {case:?}") };
    object.get(name).unwrap_or_else(|| panic!("case lacks `{name}`: {case:?}"))
}

fn text<'a>(case: &'a Value, name: &str) -> &'a str {
    field(case, name).as_str().unwrap_or_else(|| panic!("`{name}` must be a string"))
}

/// Reads the fixtures' tagged JSON: plain JSON, except `{"$bytes": hex}`, `{"$float": text}` and
/// `{"$object": {...}}` for an object whose only key would look like a tag.
fn untag(tagged: &Value) -> Value {
    match tagged {
        Value::List(list) => {
            Value::List(value::List::new(list.iter().map(untag).collect()).expect("shallow"))
        }
        Value::Object(object) => {
            if let [(tag, inner)] = object.entries() {
                match (&**tag, inner) {
                    ("$bytes", Value::String(h)) => {
                        return Value::bytes(hex::decode(&**h).expect("$bytes hex"));
                    }
                    ("$float", Value::String(t)) => {
                        let parsed: f64 = t.parse().expect("$float text");
                        return Value::Number(Number::new(parsed).expect("finite $float"));
                    }
                    ("$object", Value::Object(fields)) => return untag_fields(fields),
                    _ => {}
                }
            }
            untag_fields(object)
        }
        scalar => scalar.clone(),
    }
}

fn untag_fields(object: &Object) -> Value {
    let pairs = object.entries().iter().map(|(k, v)| (k.clone(), untag(v))).collect();
    Value::Object(Object::from_pairs(pairs).expect("shallow"))
}

#[test]
fn every_value_fixture_matches_encoding_json_and_digest() {
    let mut checked = 0;
    for (file, cases) in fixture_files(&fixture_dir()) {
        for case in &cases {
            let name = format!("{file}: {}", text(case, "name"));
            let value = untag(field(case, "value"));
            let expected_bytes = hex::decode(text(case, "rcve_hex")).expect("rcve_hex");

            let encoded = value::rcve::encode(&value);
            assert_eq!(hex::encode(&encoded), text(case, "rcve_hex"), "{name}: RCVE bytes");
            assert_eq!(value::rcve::decode(&expected_bytes).as_ref(), Ok(&value), "{name}: decode");

            let digest = value::sha256(&value).to_string();
            assert_eq!(digest, format!("sha256:{}", text(case, "sha256")), "{name}: digest");
            use sha2::Digest as _;
            assert_eq!(
                hex::encode(sha2::Sha256::digest(&expected_bytes)),
                text(case, "sha256"),
                "{name}: fixture digest"
            );

            match field(case, "json") {
                Value::String(json) => {
                    assert_eq!(value::to_presentation_json(&value).as_deref(), Ok(&**json), "{name}: JSON");
                    // Integral Numbers from 2^53 up to 1e21 print as plain digits, which a reader
                    // takes as an Integer: out of range, or not exactly the Number's value.
                    if !value_support::has_large_integral_number(&value) {
                        let parsed_back = value::parse_json(json).expect("presentation JSON reads back");
                        assert!(value::equals(&parsed_back, &value), "{name}: parses back");
                    }
                }
                Value::Null => {
                    let error = value::to_presentation_json(&value).expect_err("not representable");
                    assert_eq!(error.code(), codes::NOT_JSON_REPRESENTABLE, "{name}");
                }
                other => panic!("{name}: `json` must be a string or null, not {other:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 100, "only {checked} value fixtures");
}

#[test]
fn every_invalid_rcve_fixture_is_rejected_for_its_reason() {
    for (file, cases) in fixture_files(&fixture_dir().join("invalid")) {
        for case in &cases {
            let name = format!("{file}: {}", text(case, "name"));
            let bytes = hex::decode(text(case, "rcve_hex")).expect("rcve_hex");
            let error = value::rcve::decode(&bytes).expect_err(&name);
            assert_eq!(error.kind.reason(), text(case, "error"), "{name}");
        }
    }
}

/// The fixtures must cover the cases spec §12.1 lists.
#[test]
fn fixtures_cover_the_spec_cases() {
    let all: Vec<Value> = fixture_files(&fixture_dir())
        .into_iter()
        .flat_map(|(_, cases)| cases)
        .map(|c| untag(field(&c, "value")))
        .collect();
    let has = |v: &Value| all.contains(v);
    assert!(has(&Value::Int(i64::MAX)) && has(&Value::Int(i64::MIN)));
    assert!(has(&Value::bytes((0..=255u8).collect::<Vec<_>>())));
    for n in [0.1, 1e21, 0.0, 5e-324] {
        assert!(has(&Value::number(n).expect("finite")), "{n}");
    }
    let escapes: String = (0u8..0x20).map(char::from).collect();
    assert!(has(&Value::from(escapes)));
    assert!(
        all.iter().any(|v| matches!(v, Value::Object(o) if o.keys().any(|k| !k.is_ascii()) && o.depth() > 2))
    );
}
