//! Redaction closure on generated programs (spec §6.2, invariant 10): a secret tool output flows
//! through random chains of concatenation, composites, projections, loops, tool calls and
//! caught failures; every value derived from it stays secret, and no published event, snapshot
//! or failure record shows it to a default viewer.

use proptest::prelude::*;
use runlet::engine::Outcome;
use runlet::observe::ViewPolicy;
use runlet::value::Sensitivity;

use super::redaction::run_published;

const TOOLS: &str = r#"{"tools": [
    {"name": "vault.get", "params": [], "execution": "pure",
     "outputSchema": {"type": "object", "required": ["id", "token"], "properties": {
        "id": {"type": "string"},
        "token": {"type": "string", "x-runlet-sensitivity": "secret"}}}},
    {"name": "notes.save", "params": [{"name": "text", "schema": {"type": "string"}}], "execution": "pure",
     "outputSchema": {"type": "string"}}
]}"#;

/// One binding's form over earlier bindings (by index, taken modulo how many exist): `Text` are
/// String bindings, `List` lists of Strings, `Record` objects `{v: String}`.
#[derive(Debug, Clone)]
enum Step {
    Prefix(usize),
    Concat(usize, usize),
    Wrap(usize, usize),
    First(usize),
    Record(usize),
    Field(usize),
    Each(usize),
    Saved(usize),
    Caught(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Text,
    List,
    Record,
}

/// A binding: its name, its kind, whether any path of its value was derived from the secret,
/// and for lists whether element 0 was (labels are per path: `[p, t][0]` is public).
struct Binding {
    name: String,
    kind: Kind,
    secret: bool,
    first_secret: bool,
}

/// The program for `steps`, and whether the value it returns derives from the secret. Steps
/// whose operands do not exist yet are skipped, so every program type-checks.
fn program(steps: &[Step]) -> (String, bool) {
    let mut source = String::from("s = vault.get()\nt = s.token\np = s.id\n");
    let mut bound = vec![
        Binding { name: "t".into(), kind: Kind::Text, secret: true, first_secret: true },
        Binding { name: "p".into(), kind: Kind::Text, secret: false, first_secret: false },
    ];
    for (i, step) in steps.iter().enumerate() {
        let pick = |kind: Kind, at: usize| {
            let of_kind: Vec<&Binding> = bound.iter().filter(|b| b.kind == kind).collect();
            (!of_kind.is_empty()).then(|| of_kind[at % of_kind.len()])
        };
        let name = format!("x{i}");
        // Each form: the expression, its kind, whether any path is secret, whether element 0 is.
        let made = match *step {
            Step::Prefix(a) => {
                pick(Kind::Text, a).map(|a| (format!("\"k-\" + {}", a.name), Kind::Text, a.secret, a.secret))
            }
            Step::Concat(a, b) => pick(Kind::Text, a).zip(pick(Kind::Text, b)).map(|(a, b)| {
                let secret = a.secret || b.secret;
                (format!("{} + {}", a.name, b.name), Kind::Text, secret, secret)
            }),
            Step::Wrap(a, b) => pick(Kind::Text, a).zip(pick(Kind::Text, b)).map(|(a, b)| {
                (format!("[{}, {}]", a.name, b.name), Kind::List, a.secret || b.secret, a.secret)
            }),
            Step::First(a) => pick(Kind::List, a)
                .map(|a| (format!("{}[0]", a.name), Kind::Text, a.first_secret, a.first_secret)),
            Step::Record(a) => pick(Kind::Text, a)
                .map(|a| (format!("{{ v: {} }}", a.name), Kind::Record, a.secret, a.secret)),
            Step::Field(a) => {
                pick(Kind::Record, a).map(|a| (format!("{}.v", a.name), Kind::Text, a.secret, a.secret))
            }
            Step::Each(a) => pick(Kind::List, a).map(|a| {
                let each = format!("for e in {} limit 2 {{\n    return e + \"!\"\n}}", a.name);
                (each, Kind::List, a.secret, a.first_secret)
            }),
            // A tool's answer is labelled by its own schema: public, whatever its argument was.
            Step::Saved(a) => {
                pick(Kind::Text, a).map(|a| (format!("notes.save({})", a.name), Kind::Text, false, false))
            }
            // The failure's code is built from the operand; the catch returns the code it got. A
            // failure record never holds a secret: a secret code is its redaction marker.
            Step::Caught(a) => pick(Kind::Text, a).map(|a| {
                let body = format!(
                    "boundary {{\n    return fail({}, \"failed\")\n}} catch err {{\n    return err.code\n}}",
                    a.name
                );
                (body, Kind::Text, false, false)
            }),
        };
        if let Some((expression, kind, secret, first_secret)) = made {
            source.push_str(&format!("{name} = {expression}\n"));
            bound.push(Binding { name, kind, secret, first_secret });
        }
    }
    let last = bound.last().expect("t and p are bound");
    source.push_str(&format!("return {}\n", last.name));
    (source, last.secret)
}

fn step() -> impl Strategy<Value = Step> {
    let at = 0usize..8;
    prop_oneof![
        at.clone().prop_map(Step::Prefix),
        (at.clone(), at.clone()).prop_map(|(a, b)| Step::Concat(a, b)),
        (at.clone(), at.clone()).prop_map(|(a, b)| Step::Wrap(a, b)),
        at.clone().prop_map(Step::First),
        at.clone().prop_map(Step::Record),
        at.clone().prop_map(Step::Field),
        at.clone().prop_map(Step::Each),
        at.clone().prop_map(Step::Saved),
        at.prop_map(Step::Caught),
    ]
}

/// Runs `source` with the secret as `vault.get`'s token; the outcome and everything published
/// under `view` as JSON text.
fn run(source: &str, secret: &str, view: &ViewPolicy) -> (Outcome, String) {
    let fixtures = serde_json::json!({
        "vault.get": [{"result": {"id": "v-1", "token": secret}}],
        "notes.save": [{"result": "saved"}]
    });
    run_published(TOOLS, &fixtures, source, view)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn values_derived_from_a_secret_stay_secret_and_hidden(
        steps in prop::collection::vec(step(), 1..8),
        secret in "[A-Za-z0-9]{12,20}",
    ) {
        let secret = format!("SECRET{secret}");
        let (source, derived) = program(&steps);
        let (outcome, published) = run(&source, &secret, &ViewPolicy::default());
        prop_assert!(!published.contains(&secret), "the secret leaked from\n{source}\n{published}");
        match outcome {
            Outcome::Succeeded(value) => {
                if derived {
                    prop_assert_eq!(value.max_sensitivity(), Sensitivity::Secret, "{}", source);
                }
            }
            Outcome::Failed(error) => {
                let record = format!("{error:?}");
                prop_assert!(!record.contains(&secret), "the failure record leaked: {record}");
            }
            Outcome::Cancelled => prop_assert!(false, "nothing cancels: {source}"),
        }
        let (_, cleared) = run(&source, &secret, &ViewPolicy::everything());
        prop_assert!(cleared.contains(&secret), "a cleared view sees the token, so the scan can fail");
    }
}
