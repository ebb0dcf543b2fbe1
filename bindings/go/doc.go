// Package runlet runs Runlet programs from Go: an orchestration language whose every effect is a
// call to a tool the host registered with a schema. It binds librunlet (the C ABI of
// include/runlet.h) with cgo and holds no logic of its own.
//
// A Runtime is built once from a registry file and Go handlers (Tools); it compiles programs
// and runs them. Each tool call runs its Handler on a goroutine of its own, with a context that
// carries the values of the one its run was started with and is cancelled when Runlet cancels
// the call (as it does when the run's context is done); a handler's result is JSON-encoded, a *ToolError
// fails the call with the tool's own code, any other error fails it with HOST_ERROR and comes
// back wrapped in the error Run.Wait returns, and a panic fails just that call.
//
//	rt, err := runlet.NewRuntime(runlet.Options{
//	    Registry: registryJSON,
//	    Tools:    runlet.Tools{"crm.customer": lookup},
//	    Journal:  runlet.SQLite("runs.db"), // nil: in memory; or any runlet.Journal
//	})
//	defer rt.Close()
//	prog, err := rt.Compile(source, nil)
//	defer prog.Close()
//	run, err := rt.Start(ctx, prog, map[string]any{"customer_id": "c-42"})
//	defer run.Close()
//	res, err := run.Wait(ctx)
//
// Runs are durable with a journal: Runtime.Resume continues a run another process left
// interrupted, and Runtime.Uncertain, ResolveApplied, ResolveNotApplied, ResolveFailed and
// AuthorizeFreshGeneration journal the host's decisions about calls a crash left uncertain
// (spec §5.4). Run.Events streams the run's events; Run.Snapshot and Runtime.JournalSnapshot
// give its graph; Runtime.ServePage serves the live graph page of the runtime's runs to a
// browser (docs/graph-page.md).
//
// # Concurrency and lifetimes
//
// Runtime, Program and Run are safe for concurrent use. Close each when done (Close is
// idempotent; a cleanup frees a forgotten one, but only once it is unreachable). Using a closed
// handle panics. Runlet keeps no Go pointer: every string and slice is copied by the C side
// during the call, and user data crosses as runtime/cgo handles deleted when Runlet drops them.
//
// A run's events come from librunlet's pull API on one goroutine per run, which also notices the
// run's end. That goroutine never waits in C: one goroutine per Runtime waits on librunlet's
// ready queue and wakes the run whose events or end are there, so a Runtime holds one OS
// thread in C however many runs are live (Go stops a process at 10,000 threads).
//
// # Linking
//
// By default the package links the installed shared library through pkg-config (runlet.pc).
// The runlet_static build tag links librunlet.a and its native dependencies instead; the
// runlet_dev tag builds against this repository's include/ and target/release (after
// `cargo build --release -p runlet-capi --features mcp,postgres,web,otlp`; Options.MCP, Postgres and
// Runtime.ServePage need a library built with those opt-in parts), which is what scripts/test-go
// does. The runlet_gcstress tag forces a garbage collection at every handle access (run it
// with GOGC=1).
package runlet
