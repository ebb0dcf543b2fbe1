// Crash and resume across two Go processes sharing a SQLite journal: the test binary runs itself
// as a worker that is killed (SIGKILL) in the middle of a call, then this process lists what the
// crash left uncertain, decides, and resumes the run.

package runlet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const crashRegistry = `{"tools": [
  {"name": "echo.first", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"},
  {"name": "pay.idempotent", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"},
  {"name": "pay.once", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "at_most_once"},
  {"name": "pay.checked", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "recoverable"},
  {"name": "pay.risky", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "unsafe"}
]}`

func crashSource(tool string) string {
	return fmt.Sprintf("a = echo.first(1)\nreturn [a, %s(a)]\n", tool)
}

// seenOps records the operation ids a handler saw.
type seenOps struct {
	mu  sync.Mutex
	ops []string
}

func (s *seenOps) add(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
}

func (s *seenOps) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ops...)
}

// timesTen answers with the integer argument times ten, recording the operation ids it saw.
func timesTen(seen *seenOps) Handler {
	return func(_ context.Context, call *Call) (any, error) {
		seen.add(call.OperationID)
		var args []int
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, err
		}
		return args[0] * 10, nil
	}
}

// durableOptions are the options of a runtime over the SQLite journal at path whose pay.* tools
// are handled by pay.
func durableOptions(path string, pay Handler, recover map[string]RecoverFunc) Options {
	tools := Tools{"echo.first": func(_ context.Context, call *Call) (any, error) {
		return json.RawMessage(call.Args[1 : len(call.Args)-1]), nil
	}}
	for _, name := range []string{"pay.idempotent", "pay.once", "pay.checked", "pay.risky"} {
		tools[name] = pay
	}
	return Options{
		Registry:      []byte(crashRegistry),
		Tools:         tools,
		Recover:       recover,
		Journal:       &SQLiteJournal{Path: path, Durability: Normal},
		DigestKey:     &DigestKey{ID: "crash-test", Key: []byte("the key every worker shares")},
		WorkerThreads: 2,
	}
}

// durable builds a runtime with durableOptions, closed when the test ends.
func durable(t testing.TB, path string, pay Handler, recover map[string]RecoverFunc) *Runtime {
	t.Helper()
	rt, err := NewRuntime(durableOptions(path, pay, recover))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// TestMain makes the test binary a child process some tests start: the crash tests' worker
// when crashedIn starts it (RUNLET_CRASH_JOURNAL set), the traced run when
// TestARunIsExportedInTheHostsTrace does (tracedChild set); it runs the tests otherwise.
func TestMain(m *testing.M) {
	if path := os.Getenv("RUNLET_CRASH_JOURNAL"); path != "" {
		crashWorker(path, os.Getenv("RUNLET_CRASH_TOOL"))
	}
	if os.Getenv(tracedChild) != "" {
		tracedRun()
	}
	os.Exit(m.Run())
}

// crashWorker runs crashSource(tool) over the journal at path and kills its own process with
// SIGKILL while tool is dispatching, after printing the run's id. It never returns.
func crashWorker(path, tool string) {
	die := func(_ context.Context, call *Call) (any, error) {
		fmt.Println(call.RunID)
		_ = os.Stdout.Sync()
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "crash worker: %s: %v\n", what, err)
		os.Exit(2)
	}
	rt, err := NewRuntime(durableOptions(path, die, nil))
	if err != nil {
		fail("runtime", err)
	}
	prog, err := rt.Compile(crashSource(tool), nil)
	if err != nil {
		fail("compile", err)
	}
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		fail("start", err)
	}
	_, err = run.Wait(context.Background())
	fail("the worker outlived its call", err)
}

// crashedIn runs crashSource(tool) in a worker process that is killed while tool is
// dispatching, and returns the journal's path and the run's id.
func crashedIn(t *testing.T, tool string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.db")
	return path, crashedAt(t, path, tool)
}

// crashedAt is crashedIn over the journal at path; it returns the run's id.
func crashedAt(t *testing.T, path, tool string) string {
	t.Helper()
	worker := exec.Command(os.Args[0])
	worker.Env = append(os.Environ(), "RUNLET_CRASH_JOURNAL="+path, "RUNLET_CRASH_TOOL="+tool)
	var out bytes.Buffer
	worker.Stdout, worker.Stderr = &out, &out
	err := worker.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the worker was not killed mid-call: %v\n%s", err, out.String())
	}
	runID := strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0])
	if !strings.HasPrefix(runID, "r-") {
		t.Fatalf("the worker said %q", out.String())
	}
	return runID
}

func resumed(t *testing.T, rt *Runtime, prog *Program, runID string) (string, error) {
	t.Helper()
	run, err := rt.Resume(context.Background(), prog, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	res, err := run.Wait(context.Background())
	if err != nil {
		return "", err
	}
	return string(res.Value), nil
}

func TestAnIdempotentCallIsRedispatchedAfterACrash(t *testing.T) {
	path, runID := crashedIn(t, "pay.idempotent")
	var seen seenOps
	rt := durable(t, path, timesTen(&seen), nil)
	prog := compile(t, rt, crashSource("pay.idempotent"))
	// Listed as left dispatching, but an idempotent call needs no decision to be redispatched.
	if ops, err := rt.Uncertain(prog, runID); err != nil || len(ops) != 1 || ops[0].Class != "idempotent" || ops[0].NeedsDecision {
		t.Fatalf("uncertain: %+v %v", ops, err)
	}
	if value, err := resumed(t, rt, prog, runID); err != nil || value != "[1,10]" {
		t.Fatalf("resumed: %s %v", value, err)
	}
	if len(seen.all()) != 1 {
		t.Fatalf("%d dispatches after the crash", len(seen.all()))
	}
	if _, err := rt.Resume(context.Background(), prog, "run-unknown"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("unknown run: %v", err)
	}
	other := compile(t, rt, crashSource("pay.once"))
	if _, err := rt.Resume(context.Background(), other, runID); !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("another program: %v", err)
	}
}

func TestAnAtMostOnceCallWaitsForTheHostsDecision(t *testing.T) {
	path, runID := crashedIn(t, "pay.once")
	var seen seenOps
	rt := durable(t, path, timesTen(&seen), nil)
	prog := compile(t, rt, crashSource("pay.once"))
	ops, err := rt.Uncertain(prog, runID)
	if err != nil || len(ops) != 1 || ops[0].Tool != "pay.once" || ops[0].Class != "at_most_once" || !ops[0].NeedsDecision {
		t.Fatalf("uncertain: %+v %v", ops, err)
	}
	if err := rt.ResolveApplied(prog, runID, ops[0].OperationID, "seven"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an output the schema refuses: %v", err)
	}
	if err := rt.ResolveApplied(prog, runID, ops[0].OperationID, 7); err != nil {
		t.Fatal(err)
	}
	if value, err := resumed(t, rt, prog, runID); err != nil || value != "[1,7]" || len(seen.all()) != 0 {
		t.Fatalf("resumed: %s %v after %d dispatches", value, err, len(seen.all()))
	}
	if runs, err := rt.Runs(); err != nil || len(runs) != 1 || runs[0].RunID != runID || runs[0].Status != "succeeded" {
		t.Fatalf("runs: %+v %v", runs, err)
	}

	path, runID = crashedIn(t, "pay.once")
	rt = durable(t, path, timesTen(&seen), nil)
	prog = compile(t, rt, crashSource("pay.once"))
	_, err = resumed(t, rt, prog, runID)
	if !errors.Is(err, ErrToolFailed) || !strings.Contains(err.Error(), "RL6109") {
		t.Fatalf("without a decision: %v", err)
	}
}

func TestAnUnsafeCallRunsAgainUnderAFreshGeneration(t *testing.T) {
	path, runID := crashedIn(t, "pay.risky")
	var seen seenOps
	rt := durable(t, path, timesTen(&seen), nil)
	prog := compile(t, rt, crashSource("pay.risky"))
	ops, err := rt.Uncertain(prog, runID)
	if err != nil || len(ops) != 1 {
		t.Fatalf("uncertain: %+v %v", ops, err)
	}
	if err := rt.ResolveNotApplied(prog, runID, ops[0].OperationID); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("not applied for an unsafe tool: %v", err)
	}
	fresh, err := rt.AuthorizeFreshGeneration(prog, runID, ops[0].OperationID)
	if err != nil || fresh == ops[0].OperationID {
		t.Fatalf("fresh generation %q: %v", fresh, err)
	}
	if value, err := resumed(t, rt, prog, runID); err != nil || value != "[1,10]" {
		t.Fatalf("resumed: %s %v", value, err)
	}
	if len(seen.all()) != 1 || seen.all()[0] != fresh {
		t.Fatalf("dispatched under %v, want %s", seen.all(), fresh)
	}

	path, runID = crashedIn(t, "pay.risky")
	rt = durable(t, path, timesTen(&seen), nil)
	prog = compile(t, rt, crashSource("pay.risky"))
	ops, _ = rt.Uncertain(prog, runID)
	declined := &ToolError{Code: "CARD_DECLINED", Message: "the provider declined it"}
	if err := rt.ResolveFailed(prog, runID, ops[0].OperationID, declined); err != nil {
		t.Fatal(err)
	}
	if _, err := resumed(t, rt, prog, runID); err == nil || !strings.Contains(err.Error(), "CARD_DECLINED") {
		t.Fatalf("resolved failed: %v", err)
	}
}

func TestAnInterruptedRunIsCancelledFromTheJournal(t *testing.T) {
	path, runID := crashedIn(t, "pay.once")
	var seen seenOps
	rt := durable(t, path, timesTen(&seen), nil)
	prog := compile(t, rt, crashSource("pay.once"))
	if runs, err := rt.Runs(); err != nil || len(runs) != 1 || runs[0].Status != "interrupted" || runs[0].StartedMs == nil {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if err := rt.CancelInterrupted(prog, runID); err != nil {
		t.Fatal(err)
	}
	if err := rt.CancelInterrupted(prog, runID); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a second cancel: %v", err)
	}
	if _, err := resumed(t, rt, prog, runID); !errors.Is(err, ErrCancelled) {
		t.Fatalf("resumed: %v", err)
	}
}

func TestARecoverableCallAsksItsRecoverFunc(t *testing.T) {
	path, runID := crashedIn(t, "pay.checked")
	var seen seenOps
	var asked seenOps
	recover := map[string]RecoverFunc{"pay.checked": func(_ context.Context, call *Call) (Recovered, error) {
		asked.add(call.OperationID)
		return Recovered{Outcome: Applied, Output: 5}, nil
	}}
	rt := durable(t, path, timesTen(&seen), recover)
	prog := compile(t, rt, crashSource("pay.checked"))
	if value, err := resumed(t, rt, prog, runID); err != nil || value != "[1,5]" {
		t.Fatalf("resumed: %s %v", value, err)
	}
	if len(asked.all()) != 1 || len(seen.all()) != 0 {
		t.Fatalf("asked %d times, dispatched %d times", len(asked.all()), len(seen.all()))
	}
}

func TestRecoveryAtStartResumesParksAndLeavesRuns(t *testing.T) {
	path, idempotent := crashedIn(t, "pay.idempotent")
	once := crashedAt(t, path, "pay.once")
	var seen seenOps
	sawRequest := make(chan any, 8)
	rt := durable(t, path, func(ctx context.Context, call *Call) (any, error) {
		sawRequest <- ctx.Value(requestKey{})
		return timesTen(&seen)(ctx, call)
	}, nil)
	ctx := context.WithValue(context.Background(), requestKey{}, "recovery")
	recovered, err := rt.RecoverInterrupted(ctx, 3)
	if err != nil || len(recovered) != 2 {
		t.Fatalf("recovered %+v, %v", recovered, err)
	}
	first, second := recovered[0], recovered[1]
	if first.RunID != idempotent || first.Action != RecoveryResumed || first.Run == nil {
		t.Fatalf("the idempotent run: %+v", first)
	}
	defer first.Run.Close()
	if res, err := first.Run.Wait(context.Background()); err != nil || string(res.Value) != "[1,10]" {
		t.Fatalf("the resumed run: %v %v", res, err)
	}
	// The resumed run's handler ran with the values of RecoverInterrupted's context.
	if value := <-sawRequest; value != "recovery" {
		t.Fatalf("a recovered run's handler saw %v", value)
	}
	if second.RunID != once || second.Action != RecoveryLeft || second.Code != "RL8405" || second.Run != nil {
		t.Fatalf("the at-most-once run waits for a decision: %+v", second)
	}
	rt.Close()

	parked := crashedAt(t, path, "pay.idempotent")
	rt = durable(t, path, timesTen(&seen), nil)
	recovered, err = rt.RecoverInterrupted(context.Background(), 0)
	if err != nil || len(recovered) != 2 || recovered[1].RunID != parked || recovered[1].Action != RecoveryParked {
		t.Fatalf("recovered %+v, %v", recovered, err)
	}
	if _, err := rt.RecoverInterrupted(context.Background(), -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a negative bound: %v", err)
	}
}
