//! Every intrinsic at its edges, through analysis and a run: empty and Unicode inputs, negative
//! and out-of-range positions, invalid text, results past the caps, and values from host inputs
//! (so arguments arrive at run time, converted from `Any` where the input's schema says so).

use runlet::analyze::Inputs;

use crate::support::{inputs, run, run_with, runtime};

/// Runs each `return <expression>` program and compares its JSON result or failure code.
fn check(cases: &[(&str, &str)]) {
    let runtime = runtime("[]");
    let mut wrong = Vec::new();
    for (expression, expected) in cases {
        let got = run(&runtime, &format!("return {expression}\n"));
        if got != *expected {
            wrong.push(format!("{expression}\n  expected {expected}\n  got      {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn text() {
    check(&[
        (r#"text.length("")"#, "0"),
        (r#"text.length("café👍")"#, "5"),
        (r#"text.upper("straße")"#, r#""STRASSE""#),
        (r#"text.lower("ÀÉÎ İ")"#, r#""àéî i̇""#),
        ("text.trim(\" \\t\\n x y \u{3000}\")", r#""x y""#),
        (r#"text.trim("")"#, r#""""#),
        (r#"text.split("a,,b", ",")"#, r#"["a","","b"]"#),
        (r#"text.split("", ",")"#, r#"[""]"#),
        (r#"text.split("a→b→c", "→")"#, r#"["a","b","c"]"#),
        (r#"text.split("abc", "")"#, "RL5405"),
        (r#"text.join([], ", ")"#, r#""""#),
        (r#"text.join(["a", "b", "c"], ", ")"#, r#""a, b, c""#),
        (r#"text.replace("aaa", "a", "bb")"#, r#""bbbbbb""#),
        (r#"text.replace("aaaa", "aa", "b")"#, r#""bb""#),
        (r#"text.replace("abc", "", "x")"#, "RL5405"),
        (r#"text.starts_with("café", "ca")"#, "true"),
        (r#"text.starts_with("", "")"#, "true"),
        (r#"text.ends_with("café", "é")"#, "true"),
        (r#"text.ends_with("a", "ab")"#, "false"),
        (r#"text.slice("héllo", 1, 3)"#, r#""él""#),
        (r#"text.slice("héllo", -3)"#, r#""llo""#),
        (r#"text.slice("héllo", 2, -1)"#, r#""ll""#),
        (r#"text.slice("héllo", 4, 2)"#, r#""""#),
        (r#"text.slice("héllo", -99, 99)"#, r#""héllo""#),
        (r#"text.slice("", 0)"#, r#""""#),
    ]);
}

#[test]
fn regex() {
    check(&[
        (r#"regex.matches("^[0-9]+$", "2026")"#, "true"),
        (r#"regex.matches("^[0-9]+$", "")"#, "false"),
        (r#"regex.matches("\\p{Greek}", "λ")"#, "true"),
        (r#"regex.find("[0-9]+", "ab12cd345")"#, r#""12""#),
        (r#"regex.find("[0-9]+", "abc")"#, "null"),
        (r#"regex.find_all("[0-9]+", "ab12cd345")"#, r#"["12","345"]"#),
        (r#"regex.find_all("x*", "ab")"#, r#"["","",""]"#),
        (r#"regex.find_all("[0-9]", "")"#, "[]"),
        (r#"regex.captures("(\\w+)@(\\w+)?", "ada@")"#, r#"["ada@","ada",null]"#),
        (r#"regex.captures("(?P<user>\\w+)@", "no at")"#, "null"),
        (r#"regex.replace("(\\w+)@(\\w+)", "ada@home bob@work", "${2}:$1")"#, r#""home:ada work:bob""#),
        (r#"regex.replace("a", "banana", "$$")"#, r#""b$n$n$""#),
        (r#"regex.replace("(?P<d>[0-9])", "a1b2", "<$d>")"#, r#""a<1>b<2>""#),
        (r#"regex.replace("z", "", "y")"#, r#""""#),
        (r#"regex.split("\\s*,\\s*", "a , b,c")"#, r#"["a","b","c"]"#),
        (r#"regex.split(",", "")"#, r#"[""]"#),
        (r#"regex.matches("(", "x")"#, "compile RL5401"),
        (r#"regex.matches("(a)\\1", "aa")"#, "compile RL5401"),
    ]);
}

#[test]
fn list() {
    check(&[
        ("list.length([])", "0"),
        ("list.length([1, [2, 3], null])", "3"),
        ("list.slice([1, 2, 3, 4], 1, 3)", "[2,3]"),
        ("list.slice([1, 2, 3, 4], -2)", "[3,4]"),
        ("list.slice([1, 2, 3, 4], 3, 1)", "[]"),
        ("list.slice([], 0, 5)", "[]"),
        ("list.reverse([1, \"a\", null])", r#"[null,"a",1]"#),
        ("list.reverse([])", "[]"),
        ("list.sort([3, 1.5, -2, 1])", "[-2,1,1.5,3]"),
        (r#"list.sort(["b", "a", "B", "é", ""])"#, r#"["","B","a","b","é"]"#),
        ("list.sort([])", "[]"),
        (r#"list.sort([1, "a"])"#, "RL5407"),
        ("list.sort([true, false])", "RL5407"),
        ("list.unique([1, 1.0, 2, 1, [1], [1.0], {a: 1}, {a: 1.0}])", r#"[1,2,[1],{"a":1}]"#),
        ("list.unique([])", "[]"),
        ("list.flatten([[1, 2], [], [3]])", "[1,2,3]"),
        ("list.flatten([])", "[]"),
        ("list.flatten([[[1]], [2]])", "[[1],2]"),
        ("list.range(0, 4)", "[0,1,2,3]"),
        ("list.range(-2, 1)", "[-2,-1,0]"),
        ("list.range(5, 5)", "[]"),
        ("list.range(5, 1)", "[]"),
        ("list.range(0, 1000001)", "RL5406"),
        ("list.range(-9223372036854775807, 9223372036854775807)", "RL5406"),
        ("list.length(list.range(0, 1000000))", "1000000"),
    ]);
}

#[test]
fn json() {
    check(&[
        (r#"json.parse("{\"b\": [1, 2.5, null], \"a\": \"x\"}")"#, r#"{"a":"x","b":[1,2.5,null]}"#),
        (r#"json.parse("  true ")"#, "true"),
        (r#"json.parse("\"\\ud83d\\udc4d\"")"#, r#""👍""#),
        (r#"json.parse("")"#, "RL5402"),
        (r#"json.parse("{\"a\": 1, \"a\": 2}")"#, "RL5402"),
        (r#"json.parse("[1] x")"#, "RL5402"),
        (r#"json.parse("99999999999999999999")"#, "RL5402"),
        (r#"json.parse("\"\\ud800\"")"#, "RL5402"),
        (r#"json.stringify({b: 1, a: [true, null, "é\n"]})"#, r#""{\"a\":[true,null,\"é\\n\"],\"b\":1}""#),
        (r#"json.stringify("")"#, r#""\"\"""#),
        ("json.stringify(-0.0)", r#""0""#),
        ("json.stringify(1e21)", r#""1e+21""#),
        (r#"json.parse(json.stringify({x: [1, {y: "z"}]})).x[1].y"#, r#""z""#),
    ]);
}

#[test]
fn number() {
    check(&[
        (r#"number.parse("2.5e3")"#, "2500"),
        (r#"number.parse("-0")"#, "0"),
        (r#"number.parse("99999999999999999999")"#, "100000000000000000000"),
        (r#"number.parse("1e400")"#, "RL5403"),
        (r#"number.parse(" 1")"#, "RL5403"),
        (r#"number.parse("NaN")"#, "RL5403"),
        (r#"number.parse("")"#, "RL5403"),
        (r#"number.parse_integer("-0042")"#, "-42"),
        (r#"number.parse_integer("9223372036854775807")"#, "9223372036854775807"),
        (r#"number.parse_integer("9223372036854775808")"#, "RL5403"),
        (r#"number.parse_integer("+1")"#, "RL5403"),
        (r#"number.parse_integer("1.0")"#, "RL5403"),
        (r#"number.parse_integer("٣")"#, "RL5403"),
        ("number.floor(-1.5)", "-2"),
        ("number.ceil(-1.5)", "-1"),
        ("number.round(2.5)", "3"),
        ("number.round(-2.5)", "-3"),
        ("number.round(0.49999999999999994)", "0"),
        ("number.floor(7)", "7"),
        ("number.floor(1e300)", "RL5101"),
        ("number.ceil(-9.3e18)", "RL5101"),
        ("number.floor(-9223372036854775808.0)", "-9223372036854775808"),
        ("number.format(2.5, 0)", r#""2""#),
        ("number.format(1.005, 2)", r#""1.00""#),
        ("number.format(-0.001, 2)", r#""0.00""#),
        ("number.format(-1.25, 1)", r#""-1.2""#),
        ("number.format(12, 3)", r#""12.000""#),
        ("number.format(1.5, 21)", "RL5405"),
        ("number.format(1.5, -1)", "RL5405"),
    ]);
}

#[test]
fn time_and_hash() {
    check(&[
        ("time.format(0)", r#""1970-01-01T00:00:00.000Z""#),
        ("time.format(-1)", r#""1969-12-31T23:59:59.999Z""#),
        ("time.format(951782400000)", r#""2000-02-29T00:00:00.000Z""#),
        ("time.format(253402300799999)", r#""9999-12-31T23:59:59.999Z""#),
        ("time.format(253402300800000)", "RL5405"),
        ("time.format(-62167219200001)", "RL5405"),
        (r#"time.parse("2026-01-31T10:30:00.250+01:00")"#, "1769851800250"),
        (r#"time.parse("1970-01-01T00:00:00Z")"#, "0"),
        (r#"time.parse("2023-02-29T00:00:00Z")"#, "RL5404"),
        (r#"time.parse("2026-01-31")"#, "RL5404"),
        (r#"time.format(time.parse("2024-02-29t23:59:59.9999-00:30"))"#, r#""2024-03-01T00:29:59.999Z""#),
        (r#"hash.sha256("")"#, r#""e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#),
        (r#"hash.sha256("abc")"#, r#""ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad""#),
        ("hash.digest(null)", r#""sha256:6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d""#),
        ("hash.digest({b: 1, a: 2}) == hash.digest({a: 2, b: 1})", "true"),
        ("hash.digest(1) == hash.digest(1.0)", "false"),
    ]);
}

#[test]
fn nondeterministic_functions_give_values_in_their_ranges() {
    check(&[
        ("number.random() >= 0 and number.random() < 1", "true"),
        ("time.now() > 1700000000000", "true"),
    ]);
}

#[test]
fn arguments_from_host_inputs_are_checked_at_run_time() {
    let runtime = runtime("[]");
    let values = inputs(r#"{ "doc": "{\"n\": [3, 1, 2]}", "pattern": "(", "sep": "" }"#);
    let cases = [
        ("return list.sort(json.parse(doc).n)\n", "[1,2,3]"),
        ("return regex.find(pattern, doc)\n", "RL5401"),
        ("return text.split(doc, sep)\n", "RL5405"),
        (
            "r = boundary { return regex.find(pattern, doc) } catch err { return err.code }\nreturn r\n",
            r#""RL5401""#,
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(run_with(&runtime, source, &values), expected, "{source}");
    }
}

#[test]
fn tool_output_flows_through_intrinsics_and_list_functions_keep_element_schemas() {
    let runtime = runtime(r#"[{"name": "b", "n": 2}, {"name": "a", "n": 1}]"#);
    let source = "items = store.items()\nfirst = list.reverse(list.slice(items, 0, 2))[0]\nreturn { name: text.upper(first.name), count: list.length(items) }\n";
    assert_eq!(run_with(&runtime, source, &Inputs::new()), r#"{"count":2,"name":"A"}"#);
}

#[test]
fn results_past_the_caps_fail_before_they_are_built() {
    let runtime = runtime("[]");
    let big = "x".repeat(5000);
    let values = inputs(&format!(r#"{{ "big": "{big}" }}"#));
    let cases = [
        ("return text.length(text.replace(big, \"x\", big))\n", "RL5406"),
        ("return text.length(regex.replace(\"x\", big, big))\n", "RL5406"),
        ("return text.length(text.replace(big, \"x\", \"yy\"))\n", "10000"),
    ];
    for (source, expected) in cases {
        assert_eq!(run_with(&runtime, source, &values), expected, "{source}");
    }
}
