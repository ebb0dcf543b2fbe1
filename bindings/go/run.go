// The Run: its state moves on in a goroutine of its own that never blocks in C. The runtime's
// ready queue (ready.go) wakes it when librunlet has events of the run queued or the run ended;
// it then pulls the events into the Events channel, without waiting (an event the reader has
// no room for waits in hand while librunlet's bounded queue drops what comes behind it, with a
// marker, so the run is never blocked), and records the outcome Wait returns. A watcher cancels
// the run when Start's context is done.

package runlet

// #include "runlet.h"
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// Run is a started run. Its methods are safe for concurrent use. Close it when done.
type Run struct {
	// rt keeps the Runtime from its cleanup (which would cancel the run) while the Run is held.
	rt      *Runtime
	id      string
	mu      sync.Mutex // guards ptr against Close
	ptr     *C.runlet_run
	core    *runCore
	cleanup runtime.Cleanup
}

// runCore is what the run's goroutine uses; it never refers to the Run, so that a cleanup
// frees a Run nobody holds, whatever its goroutine waits for.
type runCore struct {
	ptr    *C.runlet_run
	events chan Event
	wake   chan struct{} // the ready queue's signal, at most one pending
	done   chan struct{} // the outcome is recorded
	closed chan struct{} // Close was called: the goroutine stops delivering
	driven chan struct{} // the goroutine no longer uses ptr
	// cause is why Start's context was done when it cancelled the run, if it did.
	cause  atomic.Pointer[error]
	result *Result
	err    error
}

// Result is what a run that succeeded returned: its value as canonical JSON.
type Result struct {
	Value json.RawMessage
}

// Event is one committed event of a run (INTERFACES.md §4): its sequence number, kind (such as
// "RunCreated", "NodeSucceeded"), the node, tool and operation it is about, and the whole event
// as JSON, redacted under the runtime's view policy. Kind "EventsDropped" stands for events a
// slow reader missed: its Seq and the payload's "first_seq" are the first of them, "dropped" how
// many; re-read them from the journal.
type Event struct {
	Seq       uint64
	Kind      string
	Node      string
	Tool      string
	Operation string
	Payload   json.RawMessage
}

// launch follows the run ptr, started or resumed under ctx, whose calls carry tag.
func launch(ctx context.Context, rt *Runtime, ptr *C.runlet_run, tag uint64) *Run {
	core := &runCore{
		ptr:    ptr,
		events: make(chan Event, rt.events),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		closed: make(chan struct{}),
		driven: make(chan struct{}),
	}
	r := &Run{rt: rt, id: goString(C.runlet_run_id(ptr)), ptr: ptr, core: core}
	// The run's goroutine keeps these, not the Runtime, which a cleanup may free once neither
	// it nor a Run of it is held.
	ready, tools := rt.ready, rt.tools
	token := ready.add(core.wake)
	// Fails only for NULL handles, which these are not; the token is queued at once.
	_ = errorOf(C.runlet_run_set_ready_queue(ptr, ready.queue, C.uint64_t(token)))
	tools.runs.holdAgain(tag)
	go core.drive(tools, r.id, func() {
		ready.remove(token)
		tools.runs.release(tag)
	})
	r.cleanup = runtime.AddCleanup(r, (*runCore).free, core)
	go func() {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			core.cause.Store(&cause)
			r.Cancel()
		case <-core.done:
		}
	}()
	return r
}

// drive moves the run on each time the ready queue wakes it: it pulls the events librunlet
// queued into the Events channel, closes that after the last, and records the outcome; it
// returns once both are done, or when the Run is closed.
func (c *runCore) drive(tools *executor, runID string, forget func()) {
	// Forgotten before driven closes: whoever waits for the goroutine finds the run let go.
	defer close(c.driven)
	defer forget()
	var held *Event // pulled, waiting for room in the channel
	pulling := true
	ended := false
	for {
		for pulling && held == nil {
			var owned *C.runlet_event_owned
			err := errorOf(C.runlet_run_next_event(c.ptr, 0, &owned))
			if errors.Is(err, ErrTimeout) {
				break
			}
			if err != nil || owned == nil {
				pulling = false
				close(c.events)
				break
			}
			event := eventOf(C.runlet_event_owned_get(owned))
			C.runlet_event_owned_free(owned)
			select {
			case c.events <- event:
			default:
				held = &event
			}
		}
		if !ended && C.runlet_run_status(c.ptr) != C.RUNLET_RUN_RUNNING {
			ended = true
			c.result, c.err = outcome(c.ptr)
			c.err = tools.explain(runID, cancelledBy(c.err, c.cause.Load()))
			close(c.done)
		}
		if ended && !pulling {
			return
		}
		var deliver chan<- Event
		var event Event
		if held != nil {
			deliver, event = c.events, *held
		}
		select {
		case deliver <- event:
			held = nil
		case <-c.wake:
		case <-c.closed:
			if pulling {
				close(c.events)
			}
			return
		}
	}
}

// free is the cleanup of a Run nobody holds: its goroutine stops and the C run is freed (and
// cancelled if it has not ended).
func (c *runCore) free() {
	close(c.closed)
	<-c.driven
	C.runlet_run_free(c.ptr)
}

// cancelledBy is err, the error of a run that ended cancelled, also matching cause: why
// Start's context ended it (context.Canceled, context.DeadlineExceeded or the context's cause).
func cancelledBy(err error, cause *error) error {
	var e *Error
	if cause == nil || !errors.As(err, &e) || e.Code != CodeCancelled {
		return err
	}
	e.cause = *cause
	e.Message += ": " + e.cause.Error()
	return err
}

// eventOf copies an event Runlet lends.
func eventOf(e *C.runlet_event) Event {
	event := Event{Seq: uint64(e.seq), Kind: goString(e.kind_name), Payload: json.RawMessage(goString(e.payload_json))}
	var about struct {
		Node      string `json:"node"`
		Tool      string `json:"tool"`
		Operation string `json:"operation"`
	}
	if json.Unmarshal(event.Payload, &about) == nil {
		event.Node, event.Tool, event.Operation = about.Node, about.Tool, about.Operation
	}
	return event
}

// outcome reads how the ended run ended.
func outcome(ptr *C.runlet_run) (*Result, error) {
	if err := errorOf(C.runlet_run_wait(ptr, 0)); err != nil {
		return nil, err
	}
	var buf C.runlet_buf
	if err := errorOf(C.runlet_run_result_json(ptr, &buf)); err != nil {
		return nil, err
	}
	return &Result{Value: json.RawMessage(takeBuf(buf))}, nil
}

// ID is the run's id, by which it is resumed and found in the journal.
func (r *Run) ID() string { return r.id }

// Wait waits for the run's end. ctx bounds only the wait: when it is done first, Wait returns
// ctx.Err() and the run goes on. A failed run gives an *Error (with the handler's own error
// inside when one failed it); a cancelled one an *Error matching ErrCancelled; one whose task
// panicked (RL7307, a bug: it stopped as of its last commit and can be resumed) an *Error
// matching ErrPanic.
func (r *Run) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-r.core.done:
		return r.core.result, r.core.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Events delivers every event of the run from sequence 1, in order, and is closed after the
// last, which is always the run's end (RunSucceeded, RunFailed or RunCancelled) when the run
// journaled one (a journal failure or a panic stops a run without). A reader that falls behind by more than about twice the runtime's EventBuffer gets an
// "EventsDropped" marker in place of what it missed; the run is never blocked.
func (r *Run) Events() <-chan Event { return r.core.events }

// Cancel requests the run's cancellation. Idempotent, never blocks.
func (r *Run) Cancel() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		// A NULL handle is the only failure, excluded here.
		_ = errorOf(C.runlet_run_cancel(r.ptr))
	}
}

// Snapshot is the run's graph now — the JSON `runlet graph` prints — redacted under the
// runtime's view policy. Callable while the run goes on and after it ended, until Close.
func (r *Run) Snapshot() (json.RawMessage, error) {
	if gcStress {
		runtime.GC()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr == nil {
		panic("runlet: the Run is closed")
	}
	var buf C.runlet_buf
	if err := errorOf(C.runlet_run_snapshot_json(r.ptr, &buf)); err != nil {
		return nil, err
	}
	return json.RawMessage(takeBuf(buf)), nil
}

// Close cancels the run if it has not ended, waits for its end and frees it. Idempotent. The
// Events channel is closed, undelivered events dropped.
func (r *Run) Close() error {
	r.Cancel()
	<-r.core.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		r.cleanup.Stop()
		r.core.free()
		r.ptr = nil
	}
	return nil
}
