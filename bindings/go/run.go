// The Run: one goroutine per run pulls its events from C (runlet_run_next_event) into the Events
// channel without ever blocking on a reader, and on the last one records the outcome that Wait
// returns; a watcher cancels the run when Start's context is done.

package runlet

// #include "runlet.h"
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
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
	done    chan struct{}
	closed  chan struct{}
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
// slow reader missed: its payload has "first_seq" and "dropped"; re-read them from the journal.
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
	}
	r.cleanup = runtime.AddCleanup(r, func(p *C.runlet_run) { C.runlet_run_free(p) }, ptr)
	go r.pump(ptr)
	go func() {
		select {
		case <-ctx.Done():
			r.Cancel()
		case <-r.done:
		}
	}()
	return r
}

// pump forwards the run's events to r.events until the run ends, then records its outcome. It
// owns ptr until r.done is closed: Close waits for that before freeing it.
func (r *Run) pump(ptr *C.runlet_run) {
	var pending missed
	for {
		var owned *C.runlet_event_owned
		if err := errorOf(C.runlet_run_next_event(ptr, -1, &owned)); err != nil {
			r.err = err
			break
		}
		if owned == nil {
			break
		}
		event := eventOf(C.runlet_event_owned_get(owned))
		C.runlet_event_owned_free(owned)
		pending = r.offer(pending, event)
	}
	if r.err == nil {
		r.result, r.err = outcome(ptr)
	}
	r.err = r.rt.tools.explain(r.id, r.err)
	close(r.done)
	if pending.count > 0 {
		select {
		case r.events <- pending.marker():
		case <-r.closed:
		}
	}
	close(r.events)
}

// missed counts events a full channel did not take since the last one it did.
type missed struct {
	first, count uint64
}

func (m missed) marker() Event {
	payload := fmt.Sprintf(`{"seq":%d,"kind":"EventsDropped","dropped":%d,"first_seq":%d}`, m.first, m.count, m.first)
	return Event{Seq: m.first, Kind: "EventsDropped", Payload: json.RawMessage(payload)}
}

// offer hands event to the reader if the channel has room (after the marker of what it missed);
// it never blocks.
func (r *Run) offer(pending missed, event Event) missed {
	room := cap(r.events) - len(r.events)
	if pending.count > 0 {
		if room < 2 {
			pending.count++
			return pending
		}
		r.events <- pending.marker()
		pending = missed{}
	}
	select {
	case r.events <- event:
		return pending
	default:
		return missed{first: event.Seq, count: 1}
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
// inside when one failed it); a cancelled one an *Error matching ErrCancelled.
func (r *Run) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-r.done:
		return r.result, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Events delivers every event of the run from sequence 1, in order, and is closed after the
// last. A reader that falls behind by more than the runtime's EventBuffer gets an
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

// Close cancels the run if it has not ended, waits for its end and frees it. Idempotent. An
// unread Events channel is closed.
func (r *Run) Close() error {
	r.Cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		close(r.closed)
		r.cleanup.Stop()
		C.runlet_run_free(r.ptr)
		r.ptr = nil
	}
	return nil
}
