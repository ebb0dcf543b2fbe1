// Creating and closing many runtimes and runs leaks neither handles, goroutines nor memory.

package runlet

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rss is the process's resident set size in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatalf("the leak test measures RSS through /proc/self/statm: %v", err)
	}
	pages, err := strconv.ParseInt(strings.Fields(string(statm))[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// cycle creates a runtime, compiles, runs a program with one call to its end, and closes all.
func cycle(t *testing.T) {
	rt, err := NewRuntime(Options{Registry: []byte(testRegistry), Tools: Tools{"echo.value": echo}, WorkerThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := rt.Compile("return echo.value(items)\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Start(context.Background(), prog, map[string]any{"items": []int{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run.Wait(context.Background()); err != nil || string(res.Value) != "[1,2,3]" {
		t.Fatalf("%v %v", res, err)
	}
	run.Close()
	prog.Close()
	rt.Close()
}

// settled collects garbage until the goroutine count stops falling.
func settled() int {
	n := -1
	for range 50 {
		runtime.GC()
		if now := runtime.NumGoroutine(); now == n {
			return n
		} else {
			n = now
		}
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

func TestRuntimesAndRunsDoNotLeak(t *testing.T) {
	cycles := 10000
	if testing.Short() || raceEnabled {
		cycles = 1000
	}
	for range 200 {
		cycle(t)
	}
	goroutines, before := settled(), rss(t)
	start := time.Now()
	for range cycles {
		cycle(t)
	}
	elapsed := time.Since(start)
	after := settled()
	grown := rss(t) - before
	t.Logf("%d runtimes and runs in %v (%v each); RSS grew %d KiB", cycles, elapsed, elapsed/time.Duration(cycles), grown/1024)
	if live := liveHandles.Load(); live != 0 {
		t.Errorf("%d cgo handles are still live", live)
	}
	if after > goroutines {
		t.Errorf("%d goroutines before, %d after", goroutines, after)
	}
	// A leak of 2 KiB per cycle would show as 20 MiB over 10,000 cycles; allocator noise (about
	// 4 MiB) stays below the 1.5 KiB per cycle allowed. The race detector's shadow memory grows
	// by itself, so under it only handles and goroutines are checked.
	if limit := int64(cycles) * 1536; !raceEnabled && grown > max(limit, 8<<20) {
		t.Errorf("RSS grew by %d KiB over %d cycles", grown/1024, cycles)
	}
}
