//! Generated inputs shared by the bounds tests and the analyzer bench: a registry of many tools
//! in nested namespaces, a realistic program of a given size against it, and adversarial ones.

use std::fmt::Write;

/// A registry file with `count` tools, `svc{k}.op{i}`, in 25 namespaces. Each namespace's tool
/// kinds rotate: lookups by id (positional), searches (one object argument), and effectful
/// updates; outputs are objects with nested lists, enums, nullable objects and numbers.
pub fn registry(count: usize) -> String {
    let mut tools = Vec::with_capacity(count);
    for i in 0..count {
        let name = tool_name(i);
        let item = r#"{ "type": "object", "properties": { "id": { "type": "string" }, "amount": { "type": "number", "minimum": 0 }, "status": { "enum": ["open", "closed", "pending"] } }, "required": ["id", "amount", "status"], "additionalProperties": false }"#;
        let output = format!(
            r#"{{ "type": "object", "properties": {{ "id": {{ "type": "string" }}, "name": {{ "type": "string" }}, "score": {{ "type": "number" }}, "items": {{ "type": "array", "items": {item} }}, "owner": {{ "type": ["object", "null"], "properties": {{ "id": {{ "type": "string" }}, "name": {{ "type": "string" }} }}, "required": ["id", "name"] }} }}, "required": ["id", "name", "score", "items", "owner"], "additionalProperties": false }}"#
        );
        let entry = match i % 3 {
            0 => format!(
                r#"{{ "name": "{name}", "description": "Look up record {i}.", "params": [ {{ "name": "id", "schema": {{ "type": "string" }} }}, {{ "name": "limit", "schema": {{ "type": "integer", "minimum": 1 }}, "optional": true }} ], "outputSchema": {output}, "execution": "pure" }}"#
            ),
            1 => format!(
                r#"{{ "name": "{name}", "description": "Search {i}.", "inputSchema": {{ "type": "object", "properties": {{ "query": {{ "type": "string" }}, "limit": {{ "type": "integer", "minimum": 1, "maximum": 50 }} }}, "required": ["query"], "additionalProperties": false }}, "outputSchema": {{ "type": "array", "items": {item} }}, "execution": "pure" }}"#
            ),
            _ => format!(
                r#"{{ "name": "{name}", "description": "Update {i}.", "params": [ {{ "name": "id", "schema": {{ "type": "string" }} }}, {{ "name": "note", "schema": {{ "type": "string" }} }} ], "outputSchema": {{ "type": "object", "properties": {{ "ok": {{ "type": "boolean" }} }}, "required": ["ok"] }}, "execution": "idempotent" }}"#
            ),
        };
        tools.push(entry);
    }
    format!(
        "{{ \"tools\": [\n{}\n], \"inputs\": {{ \"customer_id\": {{ \"type\": \"string\" }} }} }}\n",
        tools.join(",\n")
    )
}

/// The name of tool `index` of [`registry`]; its kind is `index % 3` (lookup, search, update).
fn tool_name(index: usize) -> String {
    format!("svc{}.op{}", index % 25, index / 25)
}

/// The lookup, search and update tools step `i` of [`program`] calls (a registry of at least
/// 1,000 tools has them all).
fn step_tools(i: usize) -> (String, String, String) {
    let base = 3 * (i % 333);
    (tool_name(base), tool_name(base + 1), tool_name(base + 2))
}

/// A valid program of ordinary orchestration steps against [`registry`]: lookups, loops with
/// `skip`, folds, narrowing, boundaries, objects; grown to at least `bytes` bytes.
pub fn program(bytes: usize) -> String {
    let mut source = String::from("# Review of related records.\n");
    let mut reports = Vec::new();
    let mut i = 0;
    while source.len() < bytes {
        let (lookup, search, update) = step_tools(i);
        let _ = write!(
            source,
            "record_{i} = {lookup}(customer_id)\n\
             amounts_{i} = for item in record_{i}.items limit 8 {{\n  \
               skip if item.status == \"closed\"\n  \
               return item.amount * 1.5\n\
             }}\n\
             total_{i} = fold acc = 0 for amount in amounts_{i} {{\n  \
               return acc + amount\n\
             }}\n\
             owner_{i} = record_{i}.owner.name if record_{i}.owner != null else \"nobody\"\n\
             report_{i} = boundary retry 2 {{\n  \
               hits = {search}({{ query: record_{i}.name, limit: 5 }})\n  \
               saved = {update}(record_{i}.id, \"total \" + total_{i})\n  \
               return {{ id: record_{i}.id, total: total_{i}, owner: owner_{i}, hits }}\n\
             }} catch err {{\n  \
               return {{ id: record_{i}.id, total: total_{i}, owner: owner_{i}, error: err.message }}\n\
             }}\n"
        );
        reports.push(format!("report_{i}"));
        i += 1;
    }
    let _ = writeln!(source, "return [{}]", reports.join(", "));
    source
}

/// Programs meant to stress analysis, each about `bytes` long: a long dependency chain, deeply
/// nested conditionals, one wide object, many misspelt names, nested folds, many-shaped lists.
pub fn adversarial(bytes: usize) -> Vec<(&'static str, String)> {
    let mut chain = String::from("x0 = 1\n");
    let mut i = 1;
    while chain.len() < bytes {
        let _ = writeln!(chain, "x{i} = x{} + x{} * 2", i - 1, i / 2);
        i += 1;
    }
    let _ = writeln!(chain, "return x{}", i - 1);

    let mut nested = String::from("return ");
    // Each level nests a conditional, a parenthesis, an addition and a call: 20 levels stay
    // within the parser's default nesting limit.
    let depth = (bytes / 40).min(20);
    for d in 0..depth {
        let _ = write!(nested, "(svc0.op0(customer_id).score + {d} if customer_id == \"{d}\" else ");
    }
    nested.push('0');
    nested.push_str(&")".repeat(depth));
    nested.push('\n');

    let mut wide = String::from("return { ");
    let mut k = 0;
    while wide.len() < bytes {
        let _ = write!(wide, "f{k}: [{k}, \"v{k}\", {{ n: {k} }}], ");
        k += 1;
    }
    wide.push_str("}\n");

    let mut typos = String::new();
    let mut t = 0;
    while typos.len() < bytes {
        let _ = writeln!(typos, "y{t} = svc{}.opp{t}(custmer_id{t}).nmae", t % 25);
        t += 1;
    }
    typos.push_str("return 0\n");

    let mut folds = String::from("xs = svc0.op0(customer_id).items\n");
    let mut f = 0;
    while folds.len() < bytes {
        let _ = writeln!(
            folds,
            "f{f} = fold a = {{}} for x in xs {{\n  inner = fold b = null for y in xs {{ return y if y.amount > {f} else b }}\n  return a + {{ [x.id]: inner }}\n}}"
        );
        f += 1;
    }
    folds.push_str("return 0\n");

    let mut shapes = String::from("return [");
    let mut s = 0;
    while shapes.len() < bytes {
        let _ = write!(shapes, "{{ k{s}: {s} }}, ");
        s += 1;
    }
    shapes.push_str("]\n");

    vec![
        ("chain", chain),
        ("nested", nested),
        ("wide", wide),
        ("typos", typos),
        ("folds", folds),
        ("shapes", shapes),
    ]
}
