// Tool handlers: each call Runlet dispatches runs its handler on a goroutine of its own (never
// on Runlet's thread), with a context cancelled when Runlet cancels the call; the call is
// completed exactly once (an atomic guard before C), a panic fails it, and a handler's own error
// is kept so Wait can hand it back.

package runlet

// #include "shims.h"
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// Handler runs one call of a tool. Its result is encoded with encoding/json (a json.RawMessage
// passes through); a *ToolError fails the call with the tool's own code, any other error with
// HOST_ERROR (not retryable; its details hold "go_error", the binding's id for the error), and
// Wait's error then wraps it. ctx is cancelled when Runlet
// cancels the call; the call is acknowledged as cancelled at once, and what the handler returns
// afterwards is ignored.
type Handler func(ctx context.Context, call *Call) (any, error)

// Tools maps tool names (as the registry names them, such as "crm.customer") to handlers.
type Tools map[string]Handler

// RecoverFunc tells whether the operation of call, left uncertain by a crash, took effect.
type RecoverFunc func(ctx context.Context, call *Call) (Recovered, error)

// Recovered is what a RecoverFunc found out.
type Recovered struct {
	Outcome RecoveryOutcome
	// Output is the operation's result when it was Applied; encoded like a handler's result.
	Output any
}

// RecoveryOutcome is whether an uncertain operation took effect.
type RecoveryOutcome int

const (
	// Unknown: the tool cannot tell; the call stays uncertain until the host resolves it.
	Unknown RecoveryOutcome = iota
	// Applied: it took effect with Recovered.Output, which becomes the call's result.
	Applied
	// NotApplied: it did not take effect; the call is dispatched again.
	NotApplied
)

// Call is one tool call attempt as its handler sees it.
type Call struct {
	Tool        string
	Args        json.RawMessage // the canonical argument list, such as ["c-42"]
	RunID       string
	NodeID      string
	OperationID string // equal for every dispatch of one operation: deduplicate by it
	DispatchID  string // distinct for every attempt
	Attempt     int    // of the innermost boundary, from 1 (0 outside any)
	Deadline    time.Time
	// The W3C trace context of the call's dispatch span, for the handler's own spans or the
	// requests it sends; empty when the process exports no traces (docs/tracing.md).
	TraceParent string
	TraceState  string

	token     *C.runlet_tool_call
	answering sync.RWMutex // shared while a progress report uses the token; taken once it is won, before it is consumed
	completed atomic.Bool
	cancel    context.CancelFunc
	watch     cgo.Handle // the cancellation callback's; deleted by the completion that wins
}

// executor is what the C executor's user_data handle points at.
type executor struct {
	tools   Tools
	recover map[string]RecoverFunc
	base    context.Context
	stop    context.CancelFunc

	// runs are the contexts of the runs started or resumed, for their handlers' contexts.
	runs runContexts

	mu     sync.Mutex
	nextID uint64
	causes map[string]map[uint64]error // run id → handler errors by id
}

func newExecutor(tools Tools, recover map[string]RecoverFunc) *executor {
	base, stop := context.WithCancel(context.Background())
	return &executor{tools: tools, recover: recover, base: base, stop: stop, causes: map[string]map[uint64]error{}}
}

// callOf copies what the token says about the call.
func callOf(token *C.runlet_tool_call) *Call {
	call := &Call{
		Tool:        goString(C.runlet_tool_call_name(token)),
		Args:        json.RawMessage(goString(C.runlet_tool_call_args_json(token))),
		RunID:       goString(C.runlet_tool_call_run_id(token)),
		NodeID:      goString(C.runlet_tool_call_node_id(token)),
		OperationID: goString(C.runlet_tool_call_operation_id(token)),
		DispatchID:  goString(C.runlet_tool_call_dispatch_id(token)),
		Attempt:     int(C.runlet_tool_call_attempt(token)),
		TraceParent: goString(C.runlet_tool_call_traceparent(token)),
		TraceState:  goString(C.runlet_tool_call_tracestate(token)),
		token:       token,
	}
	if ms := int64(C.runlet_tool_call_deadline_unix_ms(token)); ms >= 0 {
		call.Deadline = time.UnixMilli(ms)
	}
	return call
}

// start runs answer for the call of token on a goroutine, under a context derived from its
// run's (callContext) that Runlet's cancellation cancels; a panic in it fails the call.
func (ex *executor) start(token *C.runlet_tool_call, answer func(context.Context, *Call)) {
	call := callOf(token)
	ctx, cancel := ex.runs.callContext(ex.base, uint64(C.runlet_tool_call_run_tag(token)), call.Deadline)
	call.cancel = cancel
	call.watch = newHandle(call)
	if err := errorOf(C.runlet_go_on_cancel(token, C.uintptr_t(call.watch))); err != nil {
		call.fail(C.runlet_error_new(C.RUNLET_ERR_INTERNAL, view(err.Error())))
		return
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				message := fmt.Sprintf("the handler of `%s` panicked: %v", call.Tool, r)
				call.fail(C.runlet_error_new(C.RUNLET_ERR_PANIC, view(message)))
			}
		}()
		answer(ctx, call)
	}()
}

// dispatch answers a call with its tool's handler.
func (ex *executor) dispatch(ctx context.Context, call *Call) {
	handler, ok := ex.tools[call.Tool]
	if !ok {
		ex.fail(call, fmt.Errorf("no Go handler is registered for tool `%s`", call.Tool))
		return
	}
	value, err := handler(ctx, call)
	if err != nil {
		ex.fail(call, err)
		return
	}
	call.complete(value)
}

// recovery answers a recovery question with the tool's RecoverFunc (Unknown without one).
func (ex *executor) recovery(ctx context.Context, call *Call) {
	found := Recovered{Outcome: Unknown}
	if recover, ok := ex.recover[call.Tool]; ok {
		var err error
		if found, err = recover(ctx, call); err != nil {
			ex.fail(call, err)
			return
		}
	}
	switch found.Outcome {
	case Applied:
		call.complete(found.Output)
	case NotApplied:
		call.answer(func(t *C.runlet_tool_call) *C.runlet_error { return C.runlet_tool_call_not_applied(t) })
	default:
		call.answer(func(t *C.runlet_tool_call) *C.runlet_error { return C.runlet_tool_call_outcome_unknown(t) })
	}
}

// fail fails call with err, a handler's error. An error kept for explain is forgotten again
// when Runlet does not take the answer: the call was answered already (acknowledged as
// cancelled, say, and its run may have ended), so no run end would ever take it.
func (ex *executor) fail(call *Call, err error) {
	failure, id := ex.failure(call, err)
	if call.fail(failure) != nil && id != 0 {
		ex.mu.Lock()
		delete(ex.causes[call.RunID], id)
		if len(ex.causes[call.RunID]) == 0 {
			delete(ex.causes, call.RunID)
		}
		ex.mu.Unlock()
	}
}

// failure is the runlet_error a handler's err fails its call with; an error that is not a
// *ToolError is kept under an id (returned, 0 for none) in the error's details, for explain.
func (ex *executor) failure(call *Call, err error) (*C.runlet_error, uint64) {
	var coded *ToolError
	if errors.As(err, &coded) {
		return coded.cError(), 0
	}
	ex.mu.Lock()
	ex.nextID++
	id := ex.nextID
	if ex.causes[call.RunID] == nil {
		ex.causes[call.RunID] = map[uint64]error{}
	}
	ex.causes[call.RunID][id] = err
	ex.mu.Unlock()
	return hostError(err, fmt.Sprintf(`{"go_error":%d}`, id)), id
}

// explain puts the handler's own error inside err, the error run runID ended with, when one
// failed it, and forgets the run's handler errors.
func (ex *executor) explain(runID string, err error) error {
	ex.mu.Lock()
	causes := ex.causes[runID]
	delete(ex.causes, runID)
	ex.mu.Unlock()
	failed, ok := err.(*Error)
	if !ok || len(causes) == 0 {
		return err
	}
	var record struct {
		Details struct {
			GoError uint64 `json:"go_error"`
		} `json:"details"`
	}
	if json.Unmarshal(failed.Details, &record) == nil {
		failed.cause = causes[record.Details.GoError]
	}
	return err
}

// complete completes the call with value, JSON-encoded (an unencodable value fails it).
func (c *Call) complete(value any) error {
	encoded, err := json.Marshal(value)
	if err != nil {
		return c.fail(hostError(fmt.Errorf("the result of `%s` does not encode as JSON: %w", c.Tool, err), ""))
	}
	return c.answer(func(t *C.runlet_tool_call) *C.runlet_error {
		return C.runlet_tool_call_complete(t, view(string(encoded)))
	})
}

// fail fails the call with failure, whose ownership passes on (freed if the call was answered).
func (c *Call) fail(failure *C.runlet_error) error {
	err := c.answer(func(t *C.runlet_tool_call) *C.runlet_error {
		C.runlet_tool_call_fail(t, failure)
		return nil
	})
	if err != nil {
		C.runlet_error_free(failure)
	}
	return err
}

// ReportProgress tells Runlet how far the call is: progress so far, of total when the tool
// knows it (a negative total when it does not), with an optional message (at most 512 bytes
// are kept). The run journals it as a "CallHeartbeat" event, which Events delivers; reports
// that come faster than the run commits coalesce, the latest kept. Safe to call from any
// goroutine while the handler runs; after the call was answered it returns
// ErrAlreadyCompleted, and a progress or total that is not finite is an error.
func (c *Call) ReportProgress(progress, total float64, message string) error {
	c.answering.RLock()
	defer c.answering.RUnlock()
	if c.completed.Load() {
		return ErrAlreadyCompleted
	}
	return errorOf(C.runlet_tool_call_report_progress(c.token, C.double(progress), C.double(total), view(message)))
}

// acknowledgeCancel answers a cancelled call at once, so Runlet need not wait for its handler;
// what the handler returns later is refused.
func (c *Call) acknowledgeCancel() {
	c.cancel()
	_ = c.fail(C.runlet_error_new(C.RUNLET_ERR_CANCELLED, view("the call was cancelled")))
}

// answer consumes the token with respond, exactly once: every later answer is refused with
// ErrAlreadyCompleted before it reaches C (where it would be undefined). Returns Runlet's
// refusal of the answer, if any (Runlet then fails the call itself).
func (c *Call) answer(respond func(*C.runlet_tool_call) *C.runlet_error) error {
	if !c.completed.CompareAndSwap(false, true) {
		return ErrAlreadyCompleted
	}
	// A barrier, not a critical section: progress reports that saw the call open finish before
	// the token goes, later ones see it completed. Not held across respond, whose C side waits
	// for a running cancellation callback, which answers too (and must find the call taken).
	c.answering.Lock()
	c.answering.Unlock()
	refused := errorOf(respond(c.token))
	// The cancellation callback never runs after the completion returned: its handle can go.
	deleteHandle(c.watch)
	c.cancel()
	return refused
}
