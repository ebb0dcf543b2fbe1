//! Lexing and parsing a realistic ~10 KiB Runlet program, against two baselines measured in the
//! same run: the logos lexer alone and `serde_json::from_str` on a 10 KiB JSON document.

use std::fmt::Write;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A program of ordinary orchestration steps (calls, loops, folds, boundaries, conditionals,
/// objects, comments), each step with its own names and numbers, grown to at least 10 KiB.
fn realistic_program() -> String {
    let mut source = String::from("# Nightly account review.\n");
    let mut results = Vec::new();
    let mut i = 0;
    while source.len() < 10 * 1024 {
        let step = match i % 6 {
            0 => format!(
                "customer_{i} = crm.customer(account_ids[{i}])\n\
                 orders_{i} = shop.orders({{ customer: customer_{i}.id, limit: {}, status: \"open\" }})\n",
                20 + i
            ),
            1 => format!(
                "scores_{i} = for order in orders_{p} limit {} {{\n  \
                   skip if order.total < {}\n  \
                   risk = fraud.score(customer_{p}, order)\n  \
                   return {{ id: order.id, risk, flagged: risk.value > 0.8 }}\n\
                 }}\n",
                4 + i % 8,
                i * 10,
                p = i - 1
            ),
            2 => format!(
                "total_{i} = fold acc = 0 for order in orders_{p} {{\n  \
                   return acc + order.amount * (1 - order.discount / 100)\n\
                 }}\n\
                 label_{i} = \"vip\" if total_{i} >= {} and not customer_{p}.blocked else \"standard\"\n",
                1000 + i,
                p = i - 2
            ),
            3 => format!(
                "// Summaries can fail; fall back to the raw numbers.\n\
                 summary_{i} = boundary retry 2 {{\n  \
                   text = ai.summarize({{ customer: customer_{p}, scores: scores_{q}, total: total_{r} }})\n  \
                   return text.body\n\
                 }} catch err {{\n  \
                   return \"summary unavailable: \" + err.message\n\
                 }}\n",
                p = i - 3,
                q = i - 2,
                r = i - 1
            ),
            4 => format!(
                "tier_{i} = if total_{p} >= 10000 {{\n  \
                   return \"gold\"\n\
                 }} else if total_{p} >= 1000 {{\n  \
                   return \"silver\"\n\
                 }} else {{\n  \
                   return \"bronze\"\n\
                 }}\n",
                p = i - 2
            ),
            _ => format!(
                "report_{i} = reports.save({{\n  \
                   \"account\": customer_{a}.id,\n  \
                   tier: tier_{b},\n  \
                   summary: summary_{c},\n  \
                   [customer_{a}.region]: label_{d},\n\
                 }})\n",
                a = i - 5,
                b = i - 1,
                c = i - 2,
                d = i - 3
            ),
        };
        if i % 6 == 5 {
            results.push(format!("report_{i}"));
        }
        source.push_str(&step);
        i += 1;
    }
    let _ = writeln!(source, "return [{}]", results.join(", "));
    source
}

/// A JSON document of about the same size: records with strings, numbers and nested objects.
fn json_document(bytes: usize) -> String {
    let mut records = Vec::new();
    let mut size = 0;
    let mut i = 0;
    while size < bytes {
        let record = format!(
            r#"{{"id":"cus_{i:06}","name":"Customer {i}","total":{}.{:02},"tags":["a{}","b"],"address":{{"city":"City {i}","zip":"{:05}"}},"open":{}}}"#,
            i * 37 % 10_000,
            i % 100,
            i % 7,
            i * 13 % 100_000,
            i % 2 == 0
        );
        size += record.len() + 1;
        records.push(record);
        i += 1;
    }
    format!("[{}]", records.join(","))
}

fn bench_parse(c: &mut Criterion) {
    let program = realistic_program();
    let parsed = runlet::syntax::parse(&program);
    assert!(parsed.diagnostics.is_empty(), "the bench program must be valid: {:?}", parsed.diagnostics);
    let json = json_document(program.len());

    let mut group = c.benchmark_group("parse_10k");
    group.throughput(Throughput::Bytes(program.len() as u64));
    group.bench_function("lex_and_parse", |b| b.iter(|| runlet::syntax::parse(black_box(&program))));
    group.bench_function("lex_only", |b| b.iter(|| runlet::syntax::lexer::lex(black_box(&program))));
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("serde_json_baseline", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&json)).expect("valid json"))
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
