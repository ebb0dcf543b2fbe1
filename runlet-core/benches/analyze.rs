//! Parsing and analyzing a realistic ~10 KiB program against a generated 1,000-tool registry,
//! warm, with parsing alone (and analysis of an existing parse) measured in the same run.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use runlet::analyze::{AnalyzeOptions, Inputs, analyze, analyze_parsed};
use runlet::registry::{Registry, RegistryOptions};

#[path = "../tests/analyze/generated.rs"]
#[allow(dead_code)]
mod generated;

fn bench_analyze(c: &mut Criterion) {
    let registry = Registry::from_json_str(&generated::registry(1000), &RegistryOptions::default())
        .expect("loads")
        .registry;
    let program = generated::program(10 * 1024);
    let options = AnalyzeOptions::default();
    let inputs = Inputs::new();
    let checked = analyze(&program, &registry, &inputs, &options);
    assert!(checked.diagnostics.is_empty(), "the bench program must check clean: {:?}", checked.diagnostics);
    println!(
        "program: {} bytes, {} HIR expressions; registry: {} tools",
        program.len(),
        checked.hir.as_ref().map_or(0, |p| p.exprs.len()),
        registry.tool_count()
    );
    let parse = runlet::syntax::parse(&program);

    let mut group = c.benchmark_group("analyze_10k_1000_tools");
    group.throughput(Throughput::Bytes(program.len() as u64));
    group.bench_function("parse_and_analyze", |b| {
        b.iter(|| analyze(black_box(&program), &registry, &inputs, &options))
    });
    group.bench_function("analyze_only", |b| {
        b.iter(|| analyze_parsed(black_box(&program), &parse, &registry, &inputs, &options))
    });
    group.bench_function("parse_only_baseline", |b| b.iter(|| runlet::syntax::parse(black_box(&program))));
    group.finish();
}

criterion_group!(benches, bench_analyze);
criterion_main!(benches);
