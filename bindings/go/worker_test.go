package runlet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// postgresURL is the server RUNLET_TEST_POSTGRES_URL names (scripts/test starts one); without it
// the test fails under CI=true and is skipped elsewhere.
func postgresURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("RUNLET_TEST_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and RUNLET_TEST_POSTGRES_URL is not set: this test needs a PostgreSQL server")
		}
		t.Skip("RUNLET_TEST_POSTGRES_URL is not set")
	}
	return url
}

// TestWorkersRunSubmittedRunsOfAPostgresJournal submits runs from one runtime and works them
// with two more, each with a name of its own: every run ends once, with its own result.
func TestWorkersRunSubmittedRunsOfAPostgresJournal(t *testing.T) {
	url := postgresURL(t)
	// A registry of this test's own, so the workers claim only the runs it submitted.
	registry := fmt.Sprintf(`{"tools": [
	  {"name": "echo.value", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"},
	  {"name": "nonce.go%dx%d", "params": [], "outputSchema": {}}],
	 "inputs": {"n": {"type": "integer"}}}`, os.Getpid(), time.Now().UnixNano())
	tools := Tools{"echo.value": echo}
	key := &DigestKey{ID: "go-test", Key: []byte("the key every process of the journal shares")}
	runtimeNamed := func(owner string) *Runtime {
		rt, err := NewRuntime(Options{Registry: []byte(registry), Tools: tools, Journal: Postgres(url),
			DigestKey: key, Owner: owner, WorkerThreads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		return rt
	}
	submitter := runtimeNamed("go-submitter")
	prog := compile(t, submitter, "a = echo.value(n)\nreturn a + 1\n")
	const runs = 6
	submitted := map[string]bool{}
	for i := 0; i < runs; i++ {
		id, err := submitter.Submit(prog, map[string]any{"n": i * 10})
		if err != nil {
			t.Fatal(err)
		}
		submitted[id] = true
	}
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	var mu sync.Mutex
	var handled []Handled
	report := func(done Handled) {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, done)
		if len(handled) == runs {
			stop()
		}
	}
	var wg sync.WaitGroup
	for _, owner := range []string{"go-worker-1", "go-worker-2"} {
		rt := runtimeNamed(owner)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rt.Work(ctx, WorkerOptions{Poll: 50 * time.Millisecond}, report); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(handled) != runs {
		t.Fatalf("handled %d runs of %d: %+v", len(handled), runs, handled)
	}
	for _, done := range handled {
		if !submitted[done.RunID] || done.Action != "ended" || done.Status != "succeeded" {
			t.Fatalf("%+v", done)
		}
		delete(submitted, done.RunID)
	}
}

func TestWorkNeedsAPostgresJournal(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	err := rt.Work(context.Background(), WorkerOptions{}, nil)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Work on an in-memory runtime: %v", err)
	}
	if _, err := NewRuntime(Options{Registry: []byte(testRegistry), Journal: &PostgresJournal{URL: "x", Lease: -1}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a negative lease: %v", err)
	}
}
