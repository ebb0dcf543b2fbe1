// The Go conformance host: reads a plan on standard input, runs it through the Go binding with
// Go tool handlers and a Go journal, and prints what it saw as one JSON observation
// (conformance/runner/src/observation.rs). With a crash, the first runtime's journal stops
// taking appends, that runtime is closed, and a fresh one resumes the run from the journal.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	runlet "example.invalid/runlet/bindings/go"
)

// The digest key every host's runtimes share, as two processes of one host would.
var digestKey = &runlet.DigestKey{ID: "conformance", Key: []byte("the key of the conformance hosts")}

type seenEvent struct {
	Seq  uint64 `json:"seq"`
	Kind string `json:"kind"`
}

type observation struct {
	Outcome     map[string]any    `json:"outcome"`
	Invocations []invocation      `json:"invocations"`
	MaxInFlight map[string]uint64 `json:"max_in_flight"`
	Events      []seenEvent       `json:"events"`
}

func hostError(what string, err error) map[string]any {
	return map[string]any{"status": "host_error", "message": fmt.Sprintf("%s: %v", what, err)}
}

type host struct {
	plan    *plan
	tools   *scriptedTools
	journal *memoryJournal
	inputs  map[string]any
	events  []seenEvent
}

func (h *host) runtime() (*runlet.Runtime, *runlet.Program, error) {
	var limits runlet.Limits
	if h.plan.Limits != "" {
		if err := json.Unmarshal([]byte(h.plan.Limits), &limits); err != nil {
			return nil, nil, fmt.Errorf("the limits do not decode: %w", err)
		}
	}
	rt, err := runlet.NewRuntime(runlet.Options{
		Registry:    []byte(h.plan.Registry),
		Tools:       h.tools.handlers(),
		Journal:     h.journal,
		Limits:      limits,
		DigestKey:   digestKey,
		EventBuffer: 1 << 20,
	})
	if err != nil {
		return nil, nil, err
	}
	prog, err := rt.Compile(h.plan.Source, h.inputs)
	if err != nil {
		rt.Close()
		return nil, nil, err
	}
	return rt, prog, nil
}

// follow waits for the run's end, taking every event it journaled.
func (h *host) follow(run *runlet.Run) (*runlet.Result, error) {
	for event := range run.Events() {
		h.events = append(h.events, seenEvent{Seq: event.Seq, Kind: event.Kind})
	}
	return run.Wait(context.Background())
}

func (h *host) observe() map[string]any {
	ctx := context.Background()
	h.journal.stopAfter(h.plan.CrashAfterAppends)
	rt, prog, err := h.runtime()
	var compileErr *runlet.CompileError
	if errors.As(err, &compileErr) {
		var failure *runlet.Error
		errors.As(compileErr.Unwrap(), &failure)
		return map[string]any{"status": "compile_error", "report": failure.Details}
	}
	if err != nil {
		return hostError("the runtime does not build", err)
	}
	run, err := rt.Start(ctx, prog, h.inputs)
	if err != nil {
		rt.Close()
		return hostError("the run does not start", err)
	}
	result, err := h.follow(run)
	if h.plan.CrashAfterAppends >= 0 {
		// The process is gone; a fresh one resumes the run from what the journal took.
		id := run.ID()
		run.Close()
		rt.Close()
		h.journal.stopAfter(-1)
		if rt, prog, err = h.runtime(); err != nil {
			return hostError("the resuming runtime does not build", err)
		}
		if run, err = rt.Resume(ctx, prog, id); err != nil {
			rt.Close()
			return hostError("the run does not resume", err)
		}
		result, err = h.follow(run)
	}
	defer rt.Close()
	defer run.Close()
	return ending(result, err)
}

// ending is how the run ended, as an outcome object.
func ending(result *runlet.Result, err error) map[string]any {
	if err == nil {
		return map[string]any{"status": "succeeded", "value": result.Value}
	}
	var failure *runlet.Error
	switch {
	case errors.Is(err, runlet.ErrCancelled):
		return map[string]any{"status": "cancelled"}
	case errors.As(err, &failure) && failure.Code != runlet.CodeJournal && failure.Details != nil:
		return map[string]any{"status": "failed", "error": failure.Details}
	default:
		return hostError("the run ended without a result", err)
	}
}

func main() {
	p, err := readPlan(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-host-go:", err)
		os.Exit(2)
	}
	h := &host{plan: p, tools: newScriptedTools(p), journal: newMemoryJournal()}
	decoder := json.NewDecoder(strings.NewReader(p.Inputs))
	decoder.UseNumber()
	if err := decoder.Decode(&h.inputs); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-host-go: the inputs do not decode:", err)
		os.Exit(2)
	}
	outcome := h.observe()
	invocations, maxInFlight := h.tools.counts()
	encoded, err := json.Marshal(observation{Outcome: outcome, Invocations: invocations, MaxInFlight: maxInFlight, Events: append([]seenEvent{}, h.events...)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-host-go: the observation does not encode:", err)
		os.Exit(1)
	}
	fmt.Println(string(encoded))
}
