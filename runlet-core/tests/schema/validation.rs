//! Validation of runtime values against registry schemas: tool outputs and inputs of the
//! example and fixture registries, with the first mismatch's path, expected schema and kind.

use runlet::schema::{SchemaId, validate};

use runlet::registry::{Registry, RegistryOptions};
use runlet::value::parse_json;

use crate::read;

fn registry(relative: &str) -> Registry {
    Registry::from_json_str(&read(relative), &RegistryOptions::default()).expect("fixture loads").registry
}

fn output(registry: &Registry, tool: &str) -> SchemaId {
    let id = registry.tool_named(tool).unwrap_or_else(|| panic!("no tool {tool}"));
    registry.tool(id).output
}

/// `Ok` or the error's display for `json` against `schema`.
fn check(registry: &Registry, schema: SchemaId, json: &str) -> Result<(), String> {
    let value = parse_json(json).expect("valid JSON");
    validate(registry.schemas(), schema, &value).map_err(|e| e.to_string())
}

#[test]
fn objects_check_required_closed_and_enumerated_properties() {
    let registry = registry("../../../examples/appendix-a/registry.json");
    let customer = output(&registry, "crm.customer");
    let valid = r#"{"id": "c-42", "name": "Ada", "email": "ada@example.com", "tier": "pro", "created_at": "2024-01-02T03:04:05Z", "secondary_email": null}"#;
    assert_eq!(check(&registry, customer, valid), Ok(()));
    let missing = r#"{"id": "c-42", "name": "Ada", "tier": "pro", "created_at": "x"}"#;
    assert!(check(&registry, customer, missing).unwrap_err().ends_with("found Object without `email`"));
    let extra =
        r#"{"id": "c-42", "name": "Ada", "email": "a", "tier": "pro", "created_at": "x", "vip": true}"#;
    assert!(check(&registry, customer, extra).unwrap_err().ends_with("found Object with `vip`"));
    let tier = r#"{"id": "c-42", "name": "Ada", "email": "a", "tier": "gold", "created_at": "x"}"#;
    assert_eq!(
        check(&registry, customer, tier),
        Err(r#"at $["tier"]: expected "enterprise" | "free" | "pro", found String of length 4, not one of the allowed values"#.into())
    );
}

#[test]
fn numbers_accept_exact_integers_within_bounds() {
    let registry = registry("../../../examples/appendix-a/registry.json");
    let score = output(&registry, "fraud.score");
    assert_eq!(check(&registry, score, "0.25"), Ok(()));
    assert_eq!(check(&registry, score, "1"), Ok(()));
    assert_eq!(
        check(&registry, score, "2"),
        Err("at $: expected Number[0..=1], found Integer, above the maximum 1".into())
    );
    assert_eq!(
        check(&registry, score, "-0.5"),
        Err("at $: expected Number[0..=1], found Number, below the minimum 0".into())
    );
    assert_eq!(
        check(&registry, score, r#""0.5""#),
        Err("at $: expected Number[0..=1], found String of length 3".into())
    );
}

#[test]
fn nested_lists_report_the_full_path() {
    let registry = registry("../../../examples/appendix-a/registry.json");
    let orders = output(&registry, "shop.orders");
    let order = |quantity: &str| {
        format!(
            r#"[{{"id": "o-1", "status": "completed", "total": 10, "currency": "EUR", "placed_at": "x",
                "lines": [{{"sku": "a", "quantity": 1, "unit_price": 5}}, {{"sku": "b", "quantity": {quantity}, "unit_price": 5}}]}}]"#
        )
    };
    assert_eq!(check(&registry, orders, &order("2")), Ok(()));
    assert_eq!(
        check(&registry, orders, &order("0")),
        Err(r#"at $[0]["lines"][1]["quantity"]: expected Integer[1..], found Integer, below the minimum 1"#
            .into())
    );
    assert_eq!(
        check(&registry, orders, &order("1.5")),
        Err(r#"at $[0]["lines"][1]["quantity"]: expected Integer[1..], found Number"#.into())
    );
}

/// The bound a value breaks is named; the value itself only for whoever supplied it.
#[test]
fn mismatches_name_the_bound_and_show_the_value_on_request() {
    let json = r#"{"tools": [], "inputs": {
        "page": {"type": "integer", "minimum": 1, "maximum": 100},
        "code": {"type": "string", "minLength": 2, "maxLength": 3},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 1},
        "on": {"const": true}}}"#;
    let registry = Registry::from_json_str(json, &RegistryOptions::default()).expect("registry").registry;
    let input = |name: &str| registry.inputs()[name].schema;
    let error = |name: &str, json: &str| {
        validate(registry.schemas(), input(name), &parse_json(json).expect("JSON")).expect_err(json)
    };
    let page = error("page", "0");
    assert_eq!(page.to_string(), "at $: expected Integer[1..=100], found Integer, below the minimum 1");
    assert_eq!(page.showing_value(), "at $: expected Integer[1..=100], found Integer 0, below the minimum 1");
    assert!(error("page", "101").showing_value().ends_with("found Integer 101, above the maximum 100"));
    assert!(error("code", r#""a""#).to_string().ends_with("shorter than the minimum length 2"));
    assert!(
        error("code", r#""abcd""#)
            .showing_value()
            .ends_with("found String of length 4, longer than the maximum length 3")
    );
    assert!(
        error("tags", r#"["a", "b"]"#)
            .to_string()
            .ends_with("found List of length 2, longer than the maximum length 1")
    );
    assert!(error("on", "false").showing_value().ends_with("found Boolean false, not the constant true"));
    assert_eq!(error("page", r#""1""#).bound, None, "a value of another kind breaks no bound");
}

#[test]
fn recursive_schemas_validate_at_any_depth() {
    let registry = registry("fixtures/recursive.json");
    let tree = output(&registry, "docs.tree");
    let deep =
        r#"{"title": "a", "children": [{"title": "b", "children": [{"title": "c", "children": []}]}]}"#;
    assert_eq!(check(&registry, tree, deep), Ok(()));
    let bad = r#"{"title": "a", "children": [{"title": "b", "children": [{"title": 3, "children": []}]}]}"#;
    assert_eq!(
        check(&registry, tree, bad),
        Err(r#"at $["children"][0]["children"][0]["title"]: expected String, found Integer"#.into())
    );
    let json = output(&registry, "json.parse");
    assert_eq!(check(&registry, json, r#"{"a": [1, {"b": null}, "x", true]}"#), Ok(()));
}

#[test]
fn discriminated_unions_check_the_selected_variant() {
    let registry = registry("fixtures/discriminated.json");
    let charge = output(&registry, "pay.charge");
    assert_eq!(check(&registry, charge, r#"{"status": "succeeded", "charge_id": "ch_1"}"#), Ok(()));
    assert_eq!(
        check(&registry, charge, r#"{"status": "declined"}"#),
        Err(r#"at $: expected { reason: String, status: "declined", .. }, found Object without `reason`"#
            .into())
    );
    assert!(
        check(&registry, charge, r#"{"status": "lost"}"#)
            .unwrap_err()
            .ends_with("found Object whose `status` matches no variant")
    );
    assert!(
        check(&registry, charge, r#"{"charge_id": "x"}"#)
            .unwrap_err()
            .ends_with("found Object without a constant `status`")
    );
    let values = output(&registry, "mixed.values");
    let row = r#"{"level": "low", "flag": false, "code": 2.5, "same": 1, "reordered": "x", "absorbs": "y", "anything": [1]}"#;
    assert_eq!(check(&registry, values, row), Ok(()));
    let wrong_code = row.replace("2.5", "4");
    assert_eq!(
        check(&registry, values, &wrong_code),
        Err(r#"at $["code"]: expected Null | 1 | 3 | 2.5 | "n/a", found Integer"#.into())
    );
}

#[test]
fn maps_and_inputs() {
    let registry = registry("fixtures/vocabulary.json");
    let composites = output(&registry, "vocab.composites");
    assert_eq!(check(&registry, composites, r#"{"a": [1, 2.5], "b": []}"#), Ok(()));
    assert_eq!(
        check(&registry, composites, r#"{"a": [1, "x"]}"#),
        Err(r#"at $["a"][1]: expected Number, found String of length 1"#.into())
    );
    let options = registry.inputs()["options"].schema;
    assert_eq!(check(&registry, options, r#"{"verbose": true}"#), Ok(()));
    assert!(check(&registry, options, r#"{"verbose": "yes"}"#).is_err());
}

/// An output schema of `depth` unions nested through shared definitions: each level is either
/// of two object shapes around the level below, so a search that retried shared parts would
/// take 2^depth steps, and a notation spelling out every level would be as long.
fn nested_unions(depth: usize) -> String {
    let mut defs = vec![r#""d0": {"type": "integer"}"#.to_owned()];
    for k in 1..=depth {
        let inner = format!(r##"{{"$ref": "#/$defs/d{}"}}"##, k - 1);
        defs.push(format!(
            r#""d{k}": {{"anyOf": [
                {{"type": "object", "properties": {{"a": {inner}}}, "required": ["a"], "additionalProperties": false}},
                {{"type": "object", "properties": {{"a": {inner}, "b": {{"type": "string"}}}}, "required": ["a", "b"], "additionalProperties": false}}
            ]}}"#
        ));
    }
    format!(
        r##"{{"tools": [{{"name": "deep.get", "inputSchema": {{"type": "object"}},
            "outputSchema": {{"$defs": {{{}}}, "$ref": "#/$defs/d{depth}"}}}}]}}"##,
        defs.join(",")
    )
}

#[test]
fn a_value_against_deeply_nested_shared_unions_is_checked_in_linear_time_with_a_bounded_message() {
    const DEPTH: usize = 40;
    let registry = Registry::from_json_str(&nested_unions(DEPTH), &RegistryOptions::default())
        .expect("the registry loads")
        .registry;
    let schema = output(&registry, "deep.get");
    let nest = |leaf: &str| (0..DEPTH).fold(leaf.to_owned(), |inner, _| format!(r#"{{"a": {inner}}}"#));
    assert_eq!(check(&registry, schema, &nest("7")), Ok(()));
    // The wrong leaf sits under 40 levels of two-way choices.
    let error = check(&registry, schema, &nest(r#""seven""#)).expect_err("a String where an Integer goes");
    assert!(error.chars().count() < 400, "the message stays short: {} characters", error.chars().count());
}

/// The schemas of `fixtures/real_world_keywords.json` accept and reject exactly what the JSON
/// Schema they come from does.
#[test]
fn real_world_keywords_keep_their_meaning() {
    let registry = registry("fixtures/real_world_keywords.json");
    let input =
        |tool: &str| registry.tool(registry.tool_named(tool).expect("tool")).input.object.expect("object");
    let ok = |tool: &str, json: &str| check(&registry, input(tool), json);
    let bounds = input("kw.bounds");
    for accepted in [
        r#"{"positive": 1, "below_ten": 9, "fraction": 1, "tighter": 6, "draft4": 9}"#,
        r#"{"fraction": 3, "draft4": 1, "ratio": 1e-300, "top": 9223372036854775806}"#,
        r#"{"ratio": 0.9999999999999999}"#,
    ] {
        assert_eq!(check(&registry, bounds, accepted), Ok(()), "{accepted}");
    }
    for rejected in [
        r#"{"positive": 0}"#,
        r#"{"below_ten": 10}"#,
        r#"{"fraction": 0}"#,
        r#"{"fraction": 4}"#,
        r#"{"tighter": 5}"#,
        r#"{"draft4": 0}"#,
        r#"{"ratio": 0}"#,
        r#"{"ratio": 0.0}"#,
        r#"{"ratio": 1}"#,
        r#"{"top": 9223372036854775807}"#,
    ] {
        assert!(check(&registry, bounds, rejected).is_err(), "{rejected} is accepted");
    }
    assert_eq!(ok("kw.formats", r#"{"count": 7, "size": 1.5, "when": "2024-01-01", "either": 3}"#), Ok(()));
    assert!(ok("kw.formats", r#"{"count": "7"}"#).is_err());
    assert_eq!(ok("kw.names", r#"{"labels": {"a-b": "x", "": "y"}, "open": {"k": 1}}"#), Ok(()));
    assert!(ok("kw.names", r#"{"labels": {"a": 1}}"#).is_err());
    for accepted in [r#"{"minus_two": -2.0}"#, r#"{"minus_two": -2}"#, r#"{"half_or_three": 3.0}"#] {
        assert_eq!(ok("kw.constants", accepted), Ok(()), "{accepted}");
    }
    for accepted in [r#"{"half_or_three": 0.5}"#, r#"{"half_or_three": 3}"#, r#"{"typed": -2}"#] {
        assert_eq!(ok("kw.constants", accepted), Ok(()), "{accepted}");
    }
    assert!(ok("kw.constants", r#"{"minus_two": 2}"#).is_err());
    assert!(ok("kw.constants", r#"{"half_or_three": 1}"#).is_err());
    for accepted in [r#"{"ref": {"id": "x"}}"#, r#"{"ref": {"n": 1}}"#, r#"{"narrowed": "long text"}"#] {
        assert_eq!(ok("kw.one_of", accepted), Ok(()), "{accepted}");
    }
    for accepted in [r#"{"numbers": 3}"#, r#"{"numbers": 10.5}"#] {
        assert_eq!(ok("kw.one_of", accepted), Ok(()), "{accepted}");
    }
    for rejected in [r#"{"ref": {"id": 1}}"#, r#"{"ref": {"n": 1, "id": "x"}}"#, r#"{"narrowed": null}"#] {
        assert!(ok("kw.one_of", rejected).is_err(), "{rejected} is accepted");
    }
    assert!(ok("kw.one_of", r#"{"numbers": 2.5}"#).is_err());
}
