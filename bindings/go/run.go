// The Run: one goroutine per run pulls its events from C (runlet_run_next_event) into the Events
// channel, waiting for a slow reader (librunlet's bounded queue then drops events behind it, with
// a marker, so the run is never blocked); another waits in C for the run's end and records the
// outcome Wait returns; a watcher cancels the run when Start's context is done.

package runlet

// #include "runlet.h"
import "C"

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
)

// Run is a started run. Its methods are safe for concurrent use. Close it when done.
type Run struct {
	rt      *Runtime
	id      string
	mu      sync.Mutex // guards ptr against Close
	ptr     *C.runlet_run
	cleanup runtime.Cleanup
	events  chan Event
	done    chan struct{} // the outcome is recorded
	closed  chan struct{} // Close was called: the pump stops delivering
	pumped  chan struct{} // the pump no longer uses ptr
	result  *Result
	err     error
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

func launch(ctx context.Context, rt *Runtime, ptr *C.runlet_run) *Run {
	r := &Run{
		rt:     rt,
		id:     goString(C.runlet_run_id(ptr)),
		ptr:    ptr,
		events: make(chan Event, rt.events),
		done:   make(chan struct{}),
		closed: make(chan struct{}),
		pumped: make(chan struct{}),
	}
	r.cleanup = runtime.AddCleanup(r, func(p *C.runlet_run) { C.runlet_run_free(p) }, ptr)
	go r.pump(ptr)
	go r.await(ptr)
	go func() {
		select {
		case <-ctx.Done():
			r.Cancel()
		case <-r.done:
		}
	}()
	return r
}

// await records how the run ended once it has.
func (r *Run) await(ptr *C.runlet_run) {
	r.result, r.err = outcome(ptr)
	r.err = r.rt.tools.explain(r.id, r.err)
	close(r.done)
}

// pump forwards the run's events to r.events, after its last closes the channel; it stops early
// when the Run is closed. A reader that falls behind holds the pump up, and librunlet's queue
// drops what it cannot hold; an event is made into JSON only when the pump takes it.
func (r *Run) pump(ptr *C.runlet_run) {
	defer close(r.pumped)
	defer close(r.events)
	for {
		var owned *C.runlet_event_owned
		if errorOf(C.runlet_run_next_event(ptr, -1, &owned)) != nil || owned == nil {
			return
		}
		event := eventOf(C.runlet_event_owned_get(owned))
		C.runlet_event_owned_free(owned)
		select {
		case r.events <- event:
		case <-r.closed:
			return
		}
	}
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
	if err := errorOf(C.runlet_run_wait(ptr, -1)); err != nil {
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
	case <-r.done:
		return r.result, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Events delivers every event of the run from sequence 1, in order, and is closed after the
// last. A reader that falls behind by more than about twice the runtime's EventBuffer gets an
// "EventsDropped" marker in place of what it missed; the run is never blocked.
func (r *Run) Events() <-chan Event { return r.events }

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
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		close(r.closed)
		<-r.pumped
		r.cleanup.Stop()
		C.runlet_run_free(r.ptr)
		r.ptr = nil
	}
	return nil
}
