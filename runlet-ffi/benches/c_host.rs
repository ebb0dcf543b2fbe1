//! Per-call overhead of the C ABI: one run of 100,000 no-op tool calls completed inline by an
//! executor behind `runlet_tool_executor` (an `extern "C"` callback using only the C functions),
//! against the same run in the same process with a native Rust `ToolExecutor`.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{Value, parse_json};
use runlet_ffi::*;

const CALLS: usize = 100_000;
const REGISTRY: &str = r#"{"tools": [{"name": "noop.call", "params": [{"name": "x", "schema": {}}], "execution": "idempotent"}],
    "inputs": {"items": {"type": "array", "items": {"type": "integer"}}}}"#;
const SOURCE: &str = "out = for i in items limit 64 {\n  return noop.call(i)\n}\nreturn 0\n";

fn input_json() -> String {
    let items: Vec<String> = (0..CALLS).map(|i| i.to_string()).collect();
    format!(r#"{{"items": [{}]}}"#, items.join(","))
}

fn text(s: &str) -> runlet_str {
    runlet_str { ptr: s.as_ptr().cast(), len: s.len() }
}

fn ok(err: *mut runlet_error) {
    assert!(err.is_null(), "a Runlet call failed");
}

/// Calls either executor answered, so each measured run is checked to make every call.
static CALLED: AtomicUsize = AtomicUsize::new(0);

/// The host's executor: completes every call inline with `null`.
unsafe extern "C" fn noop_invoke(_user_data: *mut c_void, call: *mut runlet_tool_call) {
    CALLED.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the token handed to `invoke`, consumed once.
    ok(unsafe { runlet_tool_call_complete(call, text("null")) });
}

/// A runtime, program and input driven only through the C functions.
struct CHost {
    runtime: *mut runlet_runtime,
    program: *mut runlet_program,
    input: String,
}

impl CHost {
    fn new() -> CHost {
        let executor = runlet_tool_executor {
            struct_size: std::mem::size_of::<runlet_tool_executor>(),
            user_data: std::ptr::null_mut(),
            invoke: Some(noop_invoke),
            drop: None,
            recover: None,
        };
        // SAFETY: a zeroed options struct is valid; the fields set are live for the call.
        let mut options: runlet_runtime_options = unsafe { std::mem::zeroed() };
        options.struct_size = std::mem::size_of::<runlet_runtime_options>();
        options.registry_json = text(REGISTRY);
        options.executor = &executor;
        options.worker_threads = 2;
        let mut runtime = std::ptr::null_mut();
        let mut program = std::ptr::null_mut();
        // SAFETY: valid options and out-pointers.
        unsafe {
            ok(runlet_runtime_new(&options, &mut runtime));
            ok(runlet_program_compile(runtime, text(SOURCE), text(""), &mut program));
        }
        CHost { runtime, program, input: input_json() }
    }

    fn run_once(&self) {
        let before = CALLED.load(Ordering::Relaxed);
        let mut run = std::ptr::null_mut();
        let mut result = runlet_buf { ptr: std::ptr::null_mut(), len: 0 };
        // SAFETY: live handles and out-pointers; everything returned is freed.
        unsafe {
            ok(runlet_run_start(self.runtime, self.program, text(&self.input), std::ptr::null(), &mut run));
            ok(runlet_run_wait(run, -1));
            ok(runlet_run_result_json(run, &mut result));
            assert_eq!(std::slice::from_raw_parts(result.ptr, result.len), b"0");
            runlet_buf_free(result);
            runlet_run_free(run);
        }
        assert_eq!(CALLED.load(Ordering::Relaxed) - before, CALLS, "every call was made");
    }
}

impl Drop for CHost {
    fn drop(&mut self) {
        // SAFETY: handles made in `new`, freed once.
        unsafe {
            runlet_program_free(self.program);
            runlet_runtime_free(self.runtime);
        }
    }
}

/// The same executor in Rust, answering inline as the C executor does.
struct Noop;

#[async_trait]
impl ToolExecutor for Noop {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: true, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, _call: ToolCall) -> Result<ToolOutput, ToolError> {
        CALLED.fetch_add(1, Ordering::Relaxed);
        Ok(ToolOutput::new(Value::Null))
    }
}

fn native_host() -> (Runtime, runlet::runtime::Executable, Inputs) {
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Noop))
        .worker_threads(2)
        .build()
        .expect("runtime");
    let program = runtime.compile(SOURCE, &Inputs::new()).expect("compiles");
    let Ok(Value::Object(input)) = parse_json(&input_json()) else { panic!("input JSON") };
    let inputs = input.entries().iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    (runtime, program, inputs)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("c_host_100k_noop_calls");
    group.sample_size(10);
    let host = CHost::new();
    group.bench_function("c_abi_executor", |b| b.iter(|| host.run_once()));
    let (runtime, program, inputs) = native_host();
    group.bench_function("native_rust_executor", |b| {
        b.iter(|| {
            let before = CALLED.load(Ordering::Relaxed);
            let outcome = runtime.start(&program, &inputs).expect("starts").wait().expect("journal");
            assert!(matches!(outcome, Outcome::Succeeded(_)));
            assert_eq!(CALLED.load(Ordering::Relaxed) - before, CALLS, "every call was made");
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
