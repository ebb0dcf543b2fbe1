//! Engine throughput: no-op tool calls through the whole runtime (compile once; each iteration
//! starts a run of a 1,000-call loop, in-memory journal), against a bare `tokio::spawn` of the
//! same no-op on the same pool as the baseline; the same runs under every execution limit and a
//! runtime-wide concurrency permit, for the cost of checking them; and the latency of a run of one
//! 1 ms call against a bare tokio task sleeping 1 ms. `examples/engine_figures.rs` takes the
//! figures criterion cannot (memory, loop growth, tail latency).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use runlet::analyze::Inputs;
use runlet::engine::{LimitKey, Limits, Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{List, Value};

const CALLS: usize = 1_000;

/// Answers every call at once: `numbers` with 0..CALLS, `noop` with its argument; `sleepy` with
/// its argument after 1 ms.
struct Instant;

#[async_trait]
impl ToolExecutor for Instant {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::new(match call.tool.as_ref() {
            "numbers" => List::new((0..CALLS as i64).map(Value::Int).collect()).expect("list").into(),
            "sleepy" => {
                tokio::time::sleep(Duration::from_millis(1)).await;
                call.arguments.iter().next().cloned().unwrap_or(Value::Null)
            }
            _ => call.arguments.iter().next().cloned().unwrap_or(Value::Null),
        }))
    }
}

fn engine(c: &mut Criterion) {
    let registry = || {
        Registry::from_json_str(
            r#"{"tools": [
            {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
            {"name": "noop", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"},
            {"name": "sleepy", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
        ]}"#,
            &RegistryOptions::default(),
        )
        .expect("registry")
        .registry
    };
    let source = "return for n in numbers() limit 64 {\n    return noop(n)\n}\n";
    let build = |limits: Limits| {
        let runtime = Runtime::builder()
            .registry(registry())
            .executor(Arc::new(Instant))
            .worker_threads(2)
            .limits(limits)
            .build()
            .expect("runtime");
        let program = runtime.compile(source, &Inputs::new()).expect("compiles");
        (runtime, program)
    };
    // Every cap set, none reached: each check runs and each call takes a permit.
    let every_limit = LimitKey::ALL.into_iter().fold(Limits::new(), |limits, key| {
        limits.with(key, if key == LimitKey::Concurrency { 64 } else { 1 << 40 })
    });
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(CALLS as u64));
    for (name, limits) in
        [("run_1000_noop_calls", Limits::new()), ("run_1000_noop_calls_under_limits", every_limit)]
    {
        let (runtime, program) = build(limits);
        group.bench_function(name, |b| {
            b.iter(|| {
                match runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal") {
                    Outcome::Succeeded(_) => {}
                    other => panic!("{other:?}"),
                }
            })
        });
    }
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("pool");
    group.bench_function("baseline_1000_tokio_spawns", |b| {
        b.iter(|| {
            pool.block_on(async {
                let executor = Arc::new(Instant);
                let tasks: Vec<_> = (0..CALLS)
                    .map(|_| {
                        let executor = Arc::clone(&executor);
                        tokio::spawn(async move { executor.noop().await })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("task");
                }
            })
        })
    });
    group.finish();
    let (runtime, _) = build(Limits::new());
    let program = runtime.compile("return sleepy(1)\n", &Inputs::new()).expect("compiles");
    let mut group = c.benchmark_group("engine_latency");
    group.bench_function("run_one_1ms_call", |b| {
        b.iter(|| match runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal") {
            Outcome::Succeeded(_) => {}
            other => panic!("{other:?}"),
        })
    });
    group.bench_function("baseline_tokio_task_sleeping_1ms", |b| {
        b.iter(|| {
            let (done, wait) = tokio::sync::oneshot::channel();
            pool.spawn(async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let _ = done.send(());
            });
            wait.blocking_recv().expect("the task answers")
        })
    });
    group.finish();
}

impl Instant {
    /// The same answer as a `noop` call, without the engine around it.
    async fn noop(&self) -> Value {
        Value::Int(1)
    }
}

criterion_group!(benches, engine);
criterion_main!(benches);
