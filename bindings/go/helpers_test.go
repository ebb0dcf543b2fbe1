// Test helpers: the example registry, a runtime built from it, fixture-driven handlers for the
// Appendix A example, and reading example files.

package runlet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// testRegistry has echo.value (returns its argument), echo.slow (waits for cancellation) and the
// host input items.
const testRegistry = `{"tools": [
  {"name": "echo.value", "params": [{"name": "x", "schema": {}}], "execution": "pure"},
  {"name": "echo.slow", "params": [{"name": "x", "schema": {}}], "execution": "pure"},
  {"name": "echo.fail", "params": [{"name": "x", "schema": {}}], "execution": "pure"}
], "inputs": {"items": {"type": "array", "items": {"type": "integer"}}}}`

// echo returns the call's only argument.
func echo(_ context.Context, call *Call) (any, error) {
	var args []json.RawMessage
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, err
	}
	return args[0], nil
}

// newTestRuntime builds a runtime over testRegistry with echo.value and the given extra tools.
func newTestRuntime(t testing.TB, tools Tools, opts Options) *Runtime {
	t.Helper()
	all := Tools{"echo.value": echo}
	for name, handler := range tools {
		all[name] = handler
	}
	opts.Registry = []byte(testRegistry)
	opts.Tools = all
	if opts.WorkerThreads == 0 {
		opts.WorkerThreads = 2
	}
	rt, err := NewRuntime(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func compile(t testing.TB, rt *Runtime, source string) *Program {
	t.Helper()
	prog, err := rt.Compile(source, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	return prog
}

// runToEnd starts prog and waits for it.
func runToEnd(t testing.TB, rt *Runtime, prog *Program, inputs map[string]any) (*Result, error) {
	t.Helper()
	run, err := rt.Start(context.Background(), prog, inputs)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return run.Wait(ctx)
}

// finished starts prog and waits for its end; the run is closed when the test ends.
func finished(t testing.TB, rt *Runtime, prog *Program, inputs map[string]any) *Run {
	t.Helper()
	run, err := rt.Start(context.Background(), prog, inputs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	if _, err := run.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return run
}

func example(t testing.TB, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "examples", "appendix-a", name))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// fixtureTools answers each tool of a fixture file (INTERFACES.md §3) with the first case whose
// args match and whose times are not used up: its result, or its error as a *ToolError.
func fixtureTools(t testing.TB, fixture []byte, calls map[string]int) Tools {
	t.Helper()
	type fixtureCase struct {
		Args   json.RawMessage `json:"args"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			Retryable bool   `json:"retryable"`
		} `json:"error"`
		Times *int `json:"times"`
	}
	var cases map[string][]*fixtureCase
	if err := json.Unmarshal(fixture, &cases); err != nil {
		t.Fatal(err)
	}
	same := func(a, b json.RawMessage) bool {
		var x, y any
		return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
	}
	tools := Tools{}
	var mu = make(chan struct{}, 1)
	for name, list := range cases {
		tools[name] = func(_ context.Context, call *Call) (any, error) {
			mu <- struct{}{}
			defer func() { <-mu }()
			calls[name]++
			for _, c := range list {
				if (c.Args != nil && !same(c.Args, call.Args)) || (c.Times != nil && *c.Times == 0) {
					continue
				}
				if c.Times != nil {
					*c.Times--
				}
				if c.Error != nil {
					return nil, &ToolError{Code: c.Error.Code, Message: c.Error.Message, Retryable: c.Error.Retryable}
				}
				return c.Result, nil
			}
			return nil, &ToolError{Code: "NO_FIXTURE", Message: "no case answers " + string(call.Args)}
		}
	}
	return tools
}
