// Figures for BENCHMARKS.md: one run of 100,000 no-op Go tool calls (the program and input of
// runlet-ffi/benches/c_host.rs, whose native Rust executor is the reference), and one Start+Wait
// of a one-call program.

package runlet

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

const benchRegistry = `{"tools": [{"name": "noop.call", "params": [{"name": "x", "schema": {}}], "execution": "idempotent"}],
    "inputs": {"items": {"type": "array", "items": {"type": "integer"}}}}`

const benchCalls = 100_000

func benchRuntime(b *testing.B, called *atomic.Int64) *Runtime {
	noop := func(context.Context, *Call) (any, error) {
		called.Add(1)
		return nil, nil
	}
	rt, err := NewRuntime(Options{Registry: []byte(benchRegistry), Tools: Tools{"noop.call": noop}, WorkerThreads: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	return rt
}

func BenchmarkNoopToolCalls100k(b *testing.B) {
	var called atomic.Int64
	rt := benchRuntime(b, &called)
	prog := compile(b, rt, "out = for i in items limit 64 {\n  return noop.call(i)\n}\nreturn 0\n")
	items := make([]string, benchCalls)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	var inputs map[string]any
	if err := json.Unmarshal([]byte(`{"items": [`+strings.Join(items, ",")+`]}`), &inputs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		before := called.Load()
		if res, err := runToEnd(b, rt, prog, inputs); err != nil || string(res.Value) != "0" {
			b.Fatalf("%v %v", res, err)
		}
		if made := called.Load() - before; made != benchCalls {
			b.Fatalf("%d calls made", made)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchCalls), "ns/call")
}

func BenchmarkStartWaitOneCall(b *testing.B) {
	var called atomic.Int64
	rt := benchRuntime(b, &called)
	prog := compile(b, rt, "return noop.call(1)\n")
	b.ResetTimer()
	for range b.N {
		if _, err := runToEnd(b, rt, prog, nil); err != nil {
			b.Fatal(err)
		}
	}
}
