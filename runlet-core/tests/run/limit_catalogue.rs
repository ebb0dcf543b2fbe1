//! The limit codes' catalogue entries: each example's first line says which `--limit KEY=N` it
//! runs under (and how its tools behave); the `## Wrong` run fails with the entry's code and the
//! `## Right` run succeeds.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::diag::{Code, catalogue, codes};
use runlet::engine::{Limits, Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::runtime::Runtime;
use runlet::value::parse_json;

use crate::registry;

const REGISTRY: &str = r#"{"tools": [
    {"name": "crm.customer", "params": [{"name": "customer_id", "schema": {"type": "string"}}], "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}, "execution": "pure"},
    {"name": "shop.orders", "params": [{"name": "customer_id", "schema": {"type": "string"}}], "outputSchema": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "status": {"type": "string"}}, "required": ["id", "status"]}}, "execution": "pure"},
    {"name": "ai.summarize", "params": [{"name": "prompt", "schema": {"type": "string"}}], "outputSchema": {"type": "string"}, "execution": "idempotent"},
    {"name": "users.list", "params": [], "outputSchema": {"type": "array", "items": {"type": "object"}}, "execution": "pure"},
    {"name": "number.floor", "params": [{"name": "value", "schema": {"type": "number"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
]}"#;

/// Answers the catalogue's tools; `ai.summarize` is slow or failing when the example says so.
struct CatalogueTools {
    note: String,
}

#[async_trait]
impl ToolExecutor for CatalogueTools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let json = match call.tool.as_ref() {
            "crm.customer" => r#"{"id": "c-1"}"#,
            "shop.orders" => r#"[{"id": "o-1", "status": "paid"}, {"id": "o-2", "status": "open"}]"#,
            "users.list" => r#"[{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]"#,
            "number.floor" => "2",
            _ if self.note.contains("keeps failing") => {
                return Err(ToolError::retryable("RATE_LIMITED", "slow down"));
            }
            _ => {
                if self.note.contains("100 ms") {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                r#""a summary""#
            }
        };
        Ok(ToolOutput::new(parse_json(json).expect("JSON")))
    }
}

/// The fenced `runlet` block following `heading`.
fn example<'t>(text: &'t str, heading: &str) -> &'t str {
    let section = &text[text.find(heading).expect("section") + heading.len()..];
    let start = section.find("```runlet\n").expect("runlet block") + "```runlet\n".len();
    let end = section[start..].find("```").expect("closing fence");
    &section[start..start + end]
}

fn run_example(source: &str) -> Outcome {
    let first = source.lines().next().unwrap_or_default();
    let assignment = first
        .strip_prefix("# run with --limit ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the example does not say its limit: {first}"));
    let (key, cap) = Limits::parse_assignment(assignment).expect("a limit");
    let runtime = Runtime::builder()
        .registry(registry(REGISTRY))
        .executor(Arc::new(CatalogueTools { note: first.to_owned() }))
        .limits(Limits::new().with(key, cap))
        .build()
        .expect("runtime");
    let program = runtime.compile(source, &Inputs::new()).unwrap_or_else(|d| panic!("{source}\n{d:#?}"));
    runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal")
}

const LIMIT_CODES: [Code; 16] = [
    codes::TOOL_CALL_LIMIT_EXCEEDED,
    codes::NODE_EVALUATION_LIMIT_EXCEEDED,
    codes::DEPTH_LIMIT_EXCEEDED,
    codes::WALL_CLOCK_LIMIT_EXCEEDED,
    codes::LOOP_ITERATION_LIMIT_EXCEEDED,
    codes::GRAPH_NODE_LIMIT_EXCEEDED,
    codes::SOURCE_BYTES_LIMIT_EXCEEDED,
    codes::CALL_INPUT_BYTES_LIMIT_EXCEEDED,
    codes::CALL_OUTPUT_BYTES_LIMIT_EXCEEDED,
    codes::RETRY_LIMIT_EXCEEDED,
    codes::GRAPH_EDGE_LIMIT_EXCEEDED,
    codes::JOURNAL_BYTES_LIMIT_EXCEEDED,
    codes::VALUE_BYTES_LIMIT_EXCEEDED,
    codes::LIST_LENGTH_LIMIT_EXCEEDED,
    codes::STRING_BYTES_LIMIT_EXCEEDED,
    codes::OBJECT_ENTRIES_LIMIT_EXCEEDED,
];

#[test]
fn limit_catalogue_examples_behave_as_documented() {
    for code in LIMIT_CODES {
        let entry = catalogue::of(code).unwrap_or_else(|| panic!("{code} has no catalogue entry"));
        match run_example(example(entry.text, "## Wrong")) {
            Outcome::Failed(error) => assert_eq!(error.code, code.to_string(), "{code}: {error:?}"),
            other => panic!("{code}: the Wrong example ended {other:?}"),
        }
        let right = run_example(example(entry.text, "## Right"));
        assert!(matches!(right, Outcome::Succeeded(_)), "{code}: the Right example ended {right:?}");
    }
}
