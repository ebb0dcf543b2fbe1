// A service's life with many runs: live runs hold no OS thread each, a context done before or
// during a run is honoured and named, handlers see the values of their run's context, handler
// errors of cancelled runs are not kept, and forgotten runs are freed.

package runlet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// osThreads is how many threads the process has.
func osThreads(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("threads are counted through /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("/proc/self/status has no Threads line")
	return 0
}

// waitingTool waits until its call is cancelled, counting the calls it is in.
func waitingTool(inside *atomic.Int64) Handler {
	return func(ctx context.Context, call *Call) (any, error) {
		inside.Add(1)
		defer inside.Add(-1)
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

func TestLiveRunsHoldNoThreadEach(t *testing.T) {
	var inside atomic.Int64
	rt := newTestRuntime(t, Tools{"echo.slow": waitingTool(&inside)}, Options{})
	prog := compile(t, rt, "return echo.slow(1)\n")
	before := osThreads(t)
	runs := 1000
	if raceEnabled {
		runs = 200
	}
	ctx, cancel := context.WithCancel(context.Background())
	var started []*Run
	for range runs {
		run, err := rt.Start(ctx, prog, nil)
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, run)
	}
	deadline := time.Now().Add(30 * time.Second)
	for inside.Load() < int64(runs) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if inside.Load() != int64(runs) {
		t.Fatalf("%d of %d calls started", inside.Load(), runs)
	}
	// Waiting in C for each run would hold two threads per run: 2,000 here.
	grown := osThreads(t) - before
	t.Logf("%d live runs added %d threads", runs, grown)
	if grown > 64 {
		t.Fatalf("%d live runs added %d threads", runs, grown)
	}
	cancel()
	for _, run := range started {
		if _, err := run.Wait(context.Background()); !errors.Is(err, ErrCancelled) {
			t.Fatalf("Wait: %v", err)
		}
		run.Close()
	}
}

func TestAContextDoneAlreadyStartsNothing(t *testing.T) {
	var calls atomic.Int64
	rt := newTestRuntime(t, Tools{"echo.slow": func(context.Context, *Call) (any, error) {
		calls.Add(1)
		return 1, nil
	}}, Options{})
	prog := compile(t, rt, "return echo.slow(1)\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		if run, err := rt.Start(ctx, prog, nil); run != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Start: %v %v", run, err)
		}
		if run, err := rt.Resume(ctx, prog, "r-1"); run != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Resume: %v %v", run, err)
		}
	}
	if _, err := rt.RecoverInterrupted(ctx, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("RecoverInterrupted: %v", err)
	}
	if calls.Load() != 0 {
		t.Fatalf("the tool was called %d times", calls.Load())
	}
}

func TestARunItsContextsDeadlineCancelledSaysSo(t *testing.T) {
	var inside atomic.Int64
	rt := newTestRuntime(t, Tools{"echo.slow": waitingTool(&inside)}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	run, err := rt.Start(ctx, compile(t, rt, "return echo.slow(1)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	_, err = run.Wait(context.Background())
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v", err)
	}
	// Cancel alone names no context.
	other, err := rt.Start(context.Background(), compile(t, rt, "return echo.slow(2)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	other.Cancel()
	_, err = other.Wait(context.Background())
	if !errors.Is(err, ErrCancelled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after Cancel: %v", err)
	}
	other.Close()
}

func TestHandlerErrorsOfCancelledRunsAreNotKept(t *testing.T) {
	var inside atomic.Int64
	rt := newTestRuntime(t, Tools{"echo.slow": func(ctx context.Context, call *Call) (any, error) {
		inside.Add(1)
		<-ctx.Done()
		// Returned after the call was acknowledged as cancelled, and often after the run ended.
		time.Sleep(time.Millisecond)
		inside.Add(-1)
		return nil, fmt.Errorf("late: %w", ctx.Err())
	}}, Options{})
	prog := compile(t, rt, "return echo.slow(1)\n")
	for range 100 {
		run, err := rt.Start(context.Background(), prog, nil)
		if err != nil {
			t.Fatal(err)
		}
		for inside.Load() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		run.Cancel()
		if _, err := run.Wait(context.Background()); !errors.Is(err, ErrCancelled) {
			t.Fatalf("Wait: %v", err)
		}
		run.Close()
	}
	// The last handler's error is handed to Runlet just after it leaves: wait for that.
	kept := func() int {
		rt.tools.mu.Lock()
		defer rt.tools.mu.Unlock()
		return len(rt.tools.causes)
	}
	deadline := time.Now().Add(10 * time.Second)
	for (inside.Load() != 0 || kept() != 0) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := kept(); n != 0 {
		t.Fatalf("handler errors of %d ended runs are kept", n)
	}
}

func TestAForgottenRunWithUnreadEventsIsFreed(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{EventBuffer: 4})
	prog := compile(t, rt, "xs = for i in items limit 4 {\n    return echo.value(i)\n}\nreturn xs\n")
	forget := func() {
		run, err := rt.Start(context.Background(), prog, map[string]any{"items": []int{1, 2, 3, 4, 5, 6, 7, 8, 9}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The first cleanups start the runtime's cleanup goroutines.
	for range 5 {
		forget()
	}
	goroutines := settled()
	for range 20 {
		forget()
	}
	// Each forgotten run's cleanup stops its goroutine, though its events were never read.
	if after := settled(); after > goroutines {
		t.Fatalf("%d goroutines before, %d after 20 forgotten runs", goroutines, after)
	}
}

func TestOptionsOutOfRangeAreRefused(t *testing.T) {
	for _, opts := range []Options{{EventBuffer: 1 << 32}, {EventBuffer: -1}, {WorkerThreads: 1 << 32}} {
		opts.Registry = []byte(testRegistry)
		if rt, err := NewRuntime(opts); !errors.Is(err, ErrInvalidArgument) {
			if rt != nil {
				rt.Close()
			}
			t.Fatalf("%+v: %v", opts, err)
		}
	}
	if got := ErrAlreadyCompleted.Error(); got != "runlet: already completed" {
		t.Fatalf("a sentinel reads %q", got)
	}
	rt := newTestRuntime(t, nil, Options{})
	if _, err := rt.Start(context.Background(), nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a nil program: %v", err)
	}
	runtime.KeepAlive(rt)
}

type requestKey struct{}

func TestHandlersSeeTheValuesOfTheirRunsContext(t *testing.T) {
	seen := make(chan any, 4)
	rt := newTestRuntime(t, Tools{"echo.slow": func(ctx context.Context, call *Call) (any, error) {
		seen <- ctx.Value(requestKey{})
		return 1, nil
	}}, Options{})
	prog := compile(t, rt, "a = echo.slow(1)\nreturn echo.slow(a)\n")
	ctx := context.WithValue(context.Background(), requestKey{}, "request-42")
	run, err := rt.Start(ctx, prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	run.Close()
	for range 2 {
		if value := <-seen; value != "request-42" {
			t.Fatalf("a handler saw %v", value)
		}
	}
	// Ended, the run's context is let go.
	rt.tools.runs.mu.Lock()
	held := len(rt.tools.runs.held)
	rt.tools.runs.mu.Unlock()
	if held != 0 {
		t.Fatalf("%d run contexts are held after every run ended", held)
	}
}
