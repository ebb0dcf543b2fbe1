// Runnable examples of the package documentation: a run with a Go tool, a handler's error
// through Wait, a coded tool error caught by a boundary, and a run's events.

package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	runlet "example.invalid/runlet/bindings/go"
)

const weatherRegistry = `{"tools": [{"name": "weather.now",
  "params": [{"name": "city", "schema": {"type": "string"}}],
  "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
  "execution": "pure"}]}`

// weather answers every city with 21.5 °C.
func weather(_ context.Context, call *runlet.Call) (any, error) {
	var args []string
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, err
	}
	return map[string]any{"celsius": 21.5}, nil
}

// A runtime with one Go tool runs a program that calls it.
func Example() {
	rt, err := runlet.NewRuntime(runlet.Options{
		Registry: []byte(weatherRegistry),
		Tools:    runlet.Tools{"weather.now": weather},
	})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	prog, err := rt.Compile("w = weather.now(city)\nreturn w.celsius\n", map[string]any{"city": "Lisbon"})
	if err != nil {
		panic(err)
	}
	defer prog.Close()
	ctx := context.Background()
	run, err := rt.Start(ctx, prog, map[string]any{"city": "Lisbon"})
	if err != nil {
		panic(err)
	}
	defer run.Close()
	res, err := run.Wait(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Value))
	// Output: 21.5
}

type outage struct{ region string }

func (e *outage) Error() string { return "the weather service is down in " + e.region }

// A handler's own error fails its call and comes back from Wait, where errors.As finds it.
func ExampleRun_Wait_handlerError() {
	down := func(context.Context, *runlet.Call) (any, error) { return nil, &outage{region: "eu-west"} }
	rt, err := runlet.NewRuntime(runlet.Options{
		Registry: []byte(weatherRegistry),
		Tools:    runlet.Tools{"weather.now": down},
	})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	prog, err := rt.Compile(`return weather.now("Oslo")`+"\n", nil)
	if err != nil {
		panic(err)
	}
	defer prog.Close()
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		panic(err)
	}
	defer run.Close()
	_, err = run.Wait(context.Background())
	var cause *outage
	fmt.Println(errors.Is(err, runlet.ErrToolFailed), errors.As(err, &cause), cause.region)
	// Output: true true eu-west
}

// A *ToolError reports a coded failure that a boundary may retry or catch.
func ExampleToolError() {
	limited := func(context.Context, *runlet.Call) (any, error) {
		return nil, &runlet.ToolError{Code: "RATE_LIMITED", Message: "slow down"}
	}
	rt, err := runlet.NewRuntime(runlet.Options{
		Registry: []byte(weatherRegistry),
		Tools:    runlet.Tools{"weather.now": limited},
	})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	source := "w = boundary {\n    return weather.now(\"Oslo\").celsius\n} catch err {\n    return err.code\n}\nreturn w\n"
	prog, err := rt.Compile(source, nil)
	if err != nil {
		panic(err)
	}
	defer prog.Close()
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		panic(err)
	}
	defer run.Close()
	res, err := run.Wait(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Value))
	// Output: "RATE_LIMITED"
}

// Events delivers the run's events in order; the channel closes after the last.
func ExampleRun_Events() {
	rt, err := runlet.NewRuntime(runlet.Options{
		Registry: []byte(weatherRegistry),
		Tools:    runlet.Tools{"weather.now": weather},
	})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	prog, err := rt.Compile(`return weather.now("Oslo").celsius`+"\n", nil)
	if err != nil {
		panic(err)
	}
	defer prog.Close()
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		panic(err)
	}
	defer run.Close()
	var first, last runlet.Event
	for event := range run.Events() {
		if event.Seq == 1 {
			first = event
		}
		last = event
	}
	fmt.Println(first.Kind, last.Kind)
	// Output: RunCreated RunSucceeded
}
