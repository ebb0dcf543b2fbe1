// The Go host's tools: one runlet.Handler per registry tool, answering from the plan's scripted
// cases (first matching case with a use left, after its delay), counting every invocation and
// the most calls of each tool in flight at once.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	runlet "example.invalid/runlet/bindings/go"
)

type invocation struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

type scriptedTools struct {
	plan *plan

	mu          sync.Mutex
	invocations []invocation
	now         map[string]uint64
	max         map[string]uint64
}

func newScriptedTools(p *plan) *scriptedTools {
	return &scriptedTools{plan: p, now: map[string]uint64{}, max: map[string]uint64{}}
}

// handlers maps every tool the registry names to the scripted handler.
func (t *scriptedTools) handlers() runlet.Tools {
	tools := runlet.Tools{}
	for _, name := range t.plan.Tools {
		tools[name] = t.handle
	}
	return tools
}

func (t *scriptedTools) handle(ctx context.Context, call *runlet.Call) (any, error) {
	c := t.begin(call)
	defer t.end(call.Tool)
	if c == nil {
		return nil, &runlet.ToolError{
			Code:    t.plan.Unanswered,
			Message: fmt.Sprintf("no case of the tool fixtures answers `%s` called with %s", call.Tool, call.Args),
		}
	}
	if c.DelayMs > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(c.DelayMs) * time.Millisecond):
		}
	}
	if !c.IsError {
		return json.RawMessage(c.Result), nil
	}
	failure := &runlet.ToolError{Code: c.Error.Code, Message: c.Error.Message, Retryable: c.Error.Retryable}
	if c.Error.RetryAfterMs >= 0 {
		failure.RetryAfter = time.Duration(c.Error.RetryAfterMs) * time.Millisecond
	}
	if c.Error.Details != nil {
		if err := json.Unmarshal(c.Error.Details, &failure.Details); err != nil {
			return nil, fmt.Errorf("the case's error details do not decode: %w", err)
		}
	}
	return nil, failure
}

// begin records the invocation, counts it in flight and claims the first case that answers it.
func (t *scriptedTools) begin(call *runlet.Call) *scriptedCase {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.invocations = append(t.invocations, invocation{Tool: call.Tool, Args: bytes.Clone(call.Args)})
	t.now[call.Tool]++
	t.max[call.Tool] = max(t.max[call.Tool], t.now[call.Tool])
	for _, c := range t.plan.Cases {
		if c.Tool != call.Tool || (c.Args != nil && !sameJSON(c.Args, call.Args)) {
			continue
		}
		if c.Times >= 0 && c.used >= c.Times {
			continue
		}
		c.used++
		return c
	}
	return nil
}

func (t *scriptedTools) end(tool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.now[tool]--
}

// counts is what the tools saw, for the observation.
func (t *scriptedTools) counts() ([]invocation, map[string]uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]invocation{}, t.invocations...), t.max
}

// sameJSON reports whether two JSON texts hold the same value, numbers compared by value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
