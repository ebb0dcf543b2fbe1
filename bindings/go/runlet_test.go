// Runs from Go: results, events, handler errors through Wait, panics, cancellation in the
// middle of a call, compile errors, bad options, snapshots, progress reports and the
// completion guard.

package runlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestARunSucceedsWithItsEventsInOrder(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	prog := compile(t, rt, "xs = for i in items limit 4 {\n    return echo.value(i * 2)\n}\nreturn xs\n")
	run, err := rt.Start(context.Background(), prog, map[string]any{"items": []int{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	var seqs []uint64
	var kinds []string
	operations := map[string]bool{}
	for event := range run.Events() {
		seqs = append(seqs, event.Seq)
		kinds = append(kinds, event.Kind)
		if event.Kind == "CallDispatchPrepared" {
			if !strings.HasPrefix(event.Operation, "op:") || event.Tool != "echo.value" {
				t.Fatalf("a dispatch names its tool and operation: %+v", event)
			}
			operations[event.Operation] = true
		}
	}
	if len(operations) != 3 {
		t.Fatalf("three calls, three operations: %v", operations)
	}
	res, err := run.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != "[2,4,6]" {
		t.Fatalf("result %s", res.Value)
	}
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: %v", i, seq, seqs)
		}
	}
	if kinds[0] != "RunCreated" || kinds[len(kinds)-1] != "RunSucceeded" {
		t.Fatalf("kinds %v", kinds)
	}
	if !strings.HasPrefix(run.ID(), "r-") {
		t.Fatalf("run id %q", run.ID())
	}
}

func TestAppendixAEndToEnd(t *testing.T) {
	calls := map[string]int{}
	rt, err := NewRuntime(Options{
		Registry: example(t, "registry.json"),
		Tools:    fixtureTools(t, example(t, "tools.json"), calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	prog := compile(t, rt, string(example(t, "main.run")))
	var inputs map[string]any
	if err := json.Unmarshal(example(t, "inputs.json"), &inputs); err != nil {
		t.Fatal(err)
	}
	res, err := runToEnd(t, rt, prog, inputs)
	if err != nil {
		t.Fatal(err)
	}
	want := `"Ada (pro) has 3 recent orders, none risky, and one open high-priority refund ticket."`
	if string(res.Value) != want {
		t.Fatalf("report %s", res.Value)
	}
	wantCalls := map[string]int{"crm.customer": 1, "billing.limits": 1, "support.tickets": 1, "shop.orders": 1,
		"fraud.score": 3, "ai.summarize": 1}
	for tool, n := range wantCalls {
		if calls[tool] != n {
			t.Errorf("%s called %d times, want %d", tool, calls[tool], n)
		}
	}
}

type quotaError struct{ left int }

func (e *quotaError) Error() string { return "quota exhausted" }

func TestAHandlersErrorComesBackFromWait(t *testing.T) {
	rt := newTestRuntime(t, Tools{"echo.fail": func(context.Context, *Call) (any, error) {
		return nil, &quotaError{left: 3}
	}}, Options{})
	_, err := runToEnd(t, rt, compile(t, rt, "return echo.fail(1)\n"), nil)
	var quota *quotaError
	if !errors.As(err, &quota) || quota.left != 3 {
		t.Fatalf("errors.As found no *quotaError in %v", err)
	}
	var failed *Error
	if !errors.As(err, &failed) || !errors.Is(err, ErrToolFailed) || !strings.Contains(failed.Message, "HOST_ERROR") {
		t.Fatalf("error %#v", err)
	}
}

func TestAToolErrorKeepsItsCode(t *testing.T) {
	rt := newTestRuntime(t, Tools{"echo.fail": func(context.Context, *Call) (any, error) {
		return nil, &ToolError{Code: "RATE_LIMITED", Message: "slow down", Details: map[string]any{"bucket": "b"}}
	}}, Options{})
	_, err := runToEnd(t, rt, compile(t, rt, "return echo.fail(1)\n"), nil)
	var failed *Error
	if !errors.As(err, &failed) {
		t.Fatalf("error %v", err)
	}
	var record struct {
		Code    string         `json:"code"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal(failed.Details, &record); err != nil {
		t.Fatal(err)
	}
	if record.Code != "RATE_LIMITED" || record.Details["bucket"] != "b" {
		t.Fatalf("record %s", failed.Details)
	}
	if errors.Unwrap(err) != nil {
		t.Fatalf("a coded tool error is not wrapped: %v", errors.Unwrap(err))
	}
}

func TestAPanickingHandlerFailsOnlyItsCall(t *testing.T) {
	rt := newTestRuntime(t, Tools{"echo.fail": func(context.Context, *Call) (any, error) {
		panic("the handler broke")
	}}, Options{})
	prog := compile(t, rt, "r = boundary {\n    return echo.fail(1)\n} catch err {\n    return err.message\n}\nreturn r\n")
	res, err := runToEnd(t, rt, prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Value), "panicked: the handler broke") {
		t.Fatalf("result %s", res.Value)
	}
	// The runtime goes on working.
	if res, err := runToEnd(t, rt, compile(t, rt, "return echo.value(1)\n"), nil); err != nil || string(res.Value) != "1" {
		t.Fatalf("%v %v", res, err)
	}
}

func TestCancellingThroughTheContextInTheMiddleOfACall(t *testing.T) {
	started := make(chan struct{})
	var sawCancel atomic.Bool
	rt := newTestRuntime(t, Tools{"echo.slow": func(ctx context.Context, call *Call) (any, error) {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		return nil, ctx.Err()
	}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	run, err := rt.Start(ctx, compile(t, rt, "return echo.slow(1)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	<-started
	cancel()
	_, err = run.Wait(context.Background())
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !sawCancel.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !sawCancel.Load() {
		t.Fatal("the handler's context was not cancelled")
	}
}

func TestWaitsContextBoundsOnlyTheWait(t *testing.T) {
	release := make(chan struct{})
	rt := newTestRuntime(t, Tools{"echo.slow": func(context.Context, *Call) (any, error) {
		<-release
		return "done", nil
	}}, Options{})
	run, err := rt.Start(context.Background(), compile(t, rt, "return echo.slow(1)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := run.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v", err)
	}
	close(release)
	res, err := run.Wait(context.Background())
	if err != nil || string(res.Value) != `"done"` {
		t.Fatalf("%v %v", res, err)
	}
}

func TestCompileErrorsListTheirDiagnostics(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	_, err := rt.Compile("return echo.valeu(1)\n", nil)
	var compileErr *CompileError
	if !errors.As(err, &compileErr) || len(compileErr.Diagnostics) == 0 || !errors.Is(err, ErrCompile) {
		t.Fatalf("Compile: %v", err)
	}
	d := compileErr.Diagnostics[0]
	if !strings.HasPrefix(d.Code, "RL") || d.Span.Line != 1 || d.Severity != "error" {
		t.Fatalf("diagnostic %+v", d)
	}
}

func TestBadOptionsAndArgumentsAreRefusedWithTheirCodes(t *testing.T) {
	if _, err := NewRuntime(Options{Registry: []byte(`{"tools": 3}`)}); !errors.Is(err, ErrRegistry) {
		t.Fatalf("registry: %v", err)
	}
	if _, err := NewRuntime(Options{Registry: []byte(testRegistry), Journal: "runs.db"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("journal: %v", err)
	}
	if _, err := NewRuntime(Options{Registry: []byte(testRegistry), Limits: Limits{"calls": 1}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("limits: %v", err)
	}
	bad := &SQLiteJournal{Path: t.TempDir() + "/runs.db", Durability: 9}
	if _, err := NewRuntime(Options{Registry: []byte(testRegistry), Journal: bad}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("durability: %v", err)
	}
	rt := newTestRuntime(t, nil, Options{})
	prog := compile(t, rt, "return items\n")
	if _, err := rt.Start(context.Background(), prog, map[string]any{"items": "no list"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("inputs: %v", err)
	}
	if _, err := rt.Start(context.Background(), prog, map[string]any{"items": func() {}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unencodable inputs: %v", err)
	}
}

func TestLimitsApply(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{Limits: Limits{"tool_calls": 1}})
	_, err := runToEnd(t, rt, compile(t, rt, "a = echo.value(1)\nb = echo.value(a + 1)\nreturn b\n"), nil)
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("Wait: %v", err)
	}
}

func TestCloseIsIdempotentAndAClosedHandlePanics(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	prog := compile(t, rt, "return echo.value(1)\n")
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
		if err := prog.Close(); err != nil {
			t.Fatal(err)
		}
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "closed") {
			t.Fatalf("recovered %v", r)
		}
	}()
	_, _ = rt.Compile("return 1\n", nil)
}

func TestACallIsAnsweredExactlyOnce(t *testing.T) {
	kept := make(chan *Call, 1)
	rt := newTestRuntime(t, Tools{"echo.fail": func(_ context.Context, call *Call) (any, error) {
		kept <- call
		return "first", nil
	}}, Options{})
	res, err := runToEnd(t, rt, compile(t, rt, "return echo.fail(1)\n"), nil)
	if err != nil || string(res.Value) != `"first"` {
		t.Fatalf("%v %v", res, err)
	}
	call := <-kept
	if err := call.complete("second"); !errors.Is(err, ErrAlreadyCompleted) {
		t.Fatalf("second completion: %v", err)
	}
}

func TestProgressReportsBecomeHeartbeatEvents(t *testing.T) {
	kept := make(chan *Call, 1)
	rt := newTestRuntime(t, Tools{"echo.fail": func(_ context.Context, call *Call) (any, error) {
		if err := call.ReportProgress(math.NaN(), -1, ""); err == nil {
			t.Error("a NaN progress is refused")
		}
		for step := 1; step <= 3; step++ {
			if err := call.ReportProgress(float64(step), 3, fmt.Sprintf("step %d", step)); err != nil {
				t.Error(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		kept <- call
		return "done", nil
	}}, Options{})
	prog := compile(t, rt, "return echo.fail(1)\n")
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	var steps []float64
	var last struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	}
	for event := range run.Events() {
		if event.Kind != "CallHeartbeat" {
			continue
		}
		if err := json.Unmarshal(event.Payload, &last); err != nil || event.Tool != "echo.fail" {
			t.Fatalf("heartbeat %+v: %v", event, err)
		}
		steps = append(steps, last.Progress)
	}
	if _, err := run.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Reports may coalesce while the run is busy; the latest always arrives.
	if len(steps) == 0 || len(steps) > 3 || last.Progress != 3 || last.Total != 3 || last.Message != "step 3" {
		t.Fatalf("heartbeats %v, last %+v", steps, last)
	}
	if err := (<-kept).ReportProgress(4, 3, ""); !errors.Is(err, ErrAlreadyCompleted) {
		t.Fatalf("a report after the answer: %v", err)
	}
}

func TestSnapshotsShowTheGraph(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	run := finished(t, rt, compile(t, rt, "return echo.value(1)\n"), nil)
	graph, err := run.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var snapshot struct {
		Run struct {
			State string `json:"state"`
		} `json:"run"`
		Nodes []struct {
			Tool *struct {
				Name string `json:"name"`
			} `json:"tool"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(graph, &snapshot); err != nil {
		t.Fatal(err)
	}
	if snapshot.Run.State != "succeeded" || len(snapshot.Nodes) == 0 {
		t.Fatalf("snapshot %s", graph)
	}
}

func TestARuntimeWithoutALiveGraphSaysWhatItsSnapshotsLack(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{Journal: SQLite(filepath.Join(t.TempDir(), "runs.db")), NoLiveGraph: true})
	prog := compile(t, rt, "return echo.value(1)\n")
	run := finished(t, rt, prog, nil)
	type graph struct {
		Run struct {
			State string `json:"state"`
		} `json:"run"`
		Nodes           []json.RawMessage `json:"nodes"`
		IntegrityErrors []string          `json:"integrity_errors"`
	}
	var live, journaled graph
	for _, read := range []struct {
		snapshot func() (json.RawMessage, error)
		into     *graph
	}{
		{run.Snapshot, &live},
		{func() (json.RawMessage, error) { return rt.JournalSnapshot(prog, run.ID()) }, &journaled},
	} {
		text, err := read.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(text, read.into); err != nil {
			t.Fatal(err)
		}
	}
	if live.Run.State != "succeeded" || len(live.Nodes) != 0 || len(live.IntegrityErrors) != 1 ||
		!strings.Contains(live.IntegrityErrors[0], "live_graph(false)") {
		t.Fatalf("the run's own snapshot: %+v", live)
	}
	if journaled.Run.State != "succeeded" || len(journaled.Nodes) == 0 || len(journaled.IntegrityErrors) != 0 {
		t.Fatalf("the journal's snapshot: %+v", journaled)
	}
}

func TestASlowReaderGetsTheDroppedEventsMarker(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{EventBuffer: 4})
	prog := compile(t, rt, "xs = for i in items limit 4 {\n    return echo.value(i)\n}\nreturn xs\n")
	run, err := rt.Start(context.Background(), prog, map[string]any{"items": []int{1, 2, 3, 4, 5, 6, 7, 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	var dropped bool
	var next uint64 = 1
	var last Event
	for event := range run.Events() {
		last = event
		if event.Kind == "EventsDropped" {
			var marker struct {
				FirstSeq uint64 `json:"first_seq"`
				Dropped  uint64 `json:"dropped"`
			}
			if err := json.Unmarshal(event.Payload, &marker); err != nil || marker.FirstSeq != next {
				t.Fatalf("marker %s after seq %d", event.Payload, next-1)
			}
			dropped = true
			next = marker.FirstSeq + marker.Dropped
			continue
		}
		if event.Seq != next {
			t.Fatalf("event seq %d, want %d", event.Seq, next)
		}
		next++
	}
	if !dropped {
		t.Fatal("no EventsDropped marker")
	}
	// However slow the reader, the run's end is never dropped.
	if last.Kind != "RunSucceeded" {
		t.Fatalf("the last event is %s: %s", last.Kind, last.Payload)
	}
}

func TestTheViewPolicyRedactsSnapshots(t *testing.T) {
	registry := `{"tools": [{"name": "vault.token", "params": [], "execution": "pure",
	  "outputSchema": {"type": "string", "x-runlet-sensitivity": "secret"}}]}`
	token := func(context.Context, *Call) (any, error) { return "hunter2", nil }
	graph := func(view View) string {
		rt, err := NewRuntime(Options{Registry: []byte(registry), Tools: Tools{"vault.token": token}, View: view})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		run, err := rt.Start(context.Background(), compile(t, rt, "return vault.token()\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		if _, err := run.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		snapshot, err := run.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		return string(snapshot)
	}
	if public := graph(View{}); strings.Contains(public, "hunter2") || !strings.Contains(public, "<redacted:secret>") {
		t.Fatalf("the default view shows the secret: %s", public)
	}
	if everything := graph(View{Values: Secret, Metadata: Secret}); !strings.Contains(everything, "hunter2") {
		t.Fatalf("a secret view hides it: %s", everything)
	}
	if _, err := NewRuntime(Options{Registry: []byte(registry), View: View{Values: 7}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an unknown label: %v", err)
	}
}

// A handler that answers the moment its context is cancelled races Runlet's own cancellation
// answer (given from the cancellation callback); whichever wins, the other is refused and
// neither waits on the other. Many rounds, because the race is narrow.
func TestAHandlerAnsweringAsItsCallIsCancelledNeverDeadlocks(t *testing.T) {
	started := make(chan struct{})
	rt := newTestRuntime(t, Tools{"echo.slow": func(ctx context.Context, call *Call) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}}, Options{})
	prog := compile(t, rt, "return echo.slow(1)\n")
	rounds := 300
	if testing.Short() {
		rounds = 30
	}
	for round := 0; round < rounds; round++ {
		run, err := rt.Start(context.Background(), prog, nil)
		if err != nil {
			t.Fatal(err)
		}
		<-started
		run.Cancel()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = run.Wait(ctx)
		cancel()
		run.Close()
		if !errors.Is(err, ErrCancelled) {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

func TestCancelStopsARunInTheMiddleOfACall(t *testing.T) {
	started := make(chan struct{})
	rt := newTestRuntime(t, Tools{"echo.slow": func(ctx context.Context, call *Call) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}, Options{})
	run, err := rt.Start(context.Background(), compile(t, rt, "return echo.slow(1)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	<-started
	run.Cancel()
	run.Cancel() // idempotent
	if _, err := run.Wait(context.Background()); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait: %v", err)
	}
}
