//! RCVE encode + digest and presentation JSON of a ~1 MiB mixed value, against
//! `serde_json::to_vec` of the same data as the baseline (figures in BENCHMARKS.md).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use runlet::value::{self, List, Object, Value};

/// A list of records mixing every JSON-representable kind: about 1 MiB of presentation JSON.
fn mixed_value() -> Value {
    let records: Vec<Value> = (0..4200i64)
        .map(|i| {
            let tags = List::new((0..4).map(|t| Value::from(format!("tag-{}", (i + t) % 37))).collect())
                .expect("shallow");
            let scores =
                List::new((0..3).map(|s| Value::number((i * 3 + s) as f64 / 7.0).expect("finite")).collect())
                    .expect("shallow");
            let nested = Object::from_pairs(vec![
                ("count".into(), Value::Int(i * 31)),
                ("scores".into(), scores.into()),
            ])
            .expect("shallow");
            let fields: Vec<(std::sync::Arc<str>, Value)> = vec![
                ("id".into(), Value::Int(i * 1_000_003)),
                ("name".into(), Value::from(format!("customer {i} — Zoë \"quoted\"\n"))),
                ("score".into(), Value::number(i as f64 * 0.1).expect("finite")),
                ("active".into(), Value::Bool(i % 3 == 0)),
                ("note".into(), Value::Null),
                ("tags".into(), tags.into()),
                ("nested".into(), nested.into()),
            ];
            Value::Object(Object::from_pairs(fields).expect("shallow"))
        })
        .collect();
    Value::List(List::new(records).expect("shallow"))
}

/// Medians over rounds that each run every operation once, so that load changes on a shared
/// machine hit all of them alike; printed with their ratio to the baseline.
fn interleaved_medians(operations: &[(&str, &dyn Fn())]) {
    const ROUNDS: usize = 301;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(ROUNDS); operations.len()];
    for _ in 0..ROUNDS {
        for (i, (_, operation)) in operations.iter().enumerate() {
            let start = Instant::now();
            operation();
            samples[i].push(start.elapsed());
        }
    }
    let medians: Vec<Duration> = samples
        .iter_mut()
        .map(|s| {
            s.sort();
            s[ROUNDS / 2]
        })
        .collect();
    for ((name, _), median) in operations.iter().zip(&medians) {
        let ratio = median.as_secs_f64() / medians[0].as_secs_f64();
        eprintln!("interleaved median {name}: {median:?} ({ratio:.2}x baseline)");
    }
}

fn benches(c: &mut Criterion) {
    let value = mixed_value();
    let json = value::to_serde_json(&value).expect("no bytes");
    let size = value::to_presentation_json(&value).expect("no bytes").len();
    eprintln!(
        "mixed value: {size} bytes of presentation JSON, {} bytes of RCVE, {} bytes from serde_json::to_vec",
        value::rcve::encode(&value).len(),
        serde_json::to_vec(&json).expect("serializes").len()
    );

    interleaved_medians(&[
        ("serde_json_to_vec (baseline)", &|| drop(black_box(serde_json::to_vec(black_box(&json))))),
        ("rcve_encode_sha256", &|| drop(black_box(value::sha256(black_box(&value))))),
        ("rcve_encode", &|| drop(black_box(value::rcve::encode(black_box(&value))))),
        ("presentation_json", &|| drop(black_box(value::to_presentation_json(black_box(&value))))),
    ]);

    let mut group = c.benchmark_group("value_1mib");
    group.throughput(Throughput::Bytes(size as u64));
    group.sample_size(30);
    group.bench_function("serde_json_to_vec (baseline)", |b| {
        b.iter(|| serde_json::to_vec(black_box(&json)).expect("serializes"))
    });
    group.bench_function("rcve_encode_sha256", |b| b.iter(|| value::sha256(black_box(&value))));
    group.bench_function("rcve_encode", |b| b.iter(|| value::rcve::encode(black_box(&value))));
    group.bench_function("presentation_json", |b| {
        b.iter(|| value::to_presentation_json(black_box(&value)).expect("no bytes"))
    });
    group.finish();
}

criterion_group!(value_benches, benches);
criterion_main!(value_benches);
