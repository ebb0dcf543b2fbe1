// The contexts runs were started or resumed with, by the host tag librunlet gives each of the
// run's calls (runlet_run_options.host_tag), so that a handler's context carries its run's
// values from the run's first call on. Not its cancellation: a run whose context is done is
// cancelled, and that cancels its calls, so a handler's context is done exactly when Runlet
// cancels its call (a handler seeing the run's context end first would fail its call, and the
// run with it, before the run's cancellation).

package runlet

import (
	"context"
	"sync"
	"time"
)

type runContexts struct {
	mu   sync.Mutex
	next uint64
	held map[uint64]*heldContext
}

// heldContext is a run context and how many holders keep it: the Start or Resume that
// registered it until its runs are launched, and each launched run until it ends.
type heldContext struct {
	ctx     context.Context
	holders int
}

// hold registers ctx, held once by the caller, and returns its tag (never 0).
func (r *runContexts) hold(ctx context.Context) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[uint64]*heldContext{}
	}
	r.next++
	r.held[r.next] = &heldContext{ctx: ctx, holders: 1}
	return r.next
}

// holdAgain adds a holder of tag's context (a run launched with it).
func (r *runContexts) holdAgain(tag uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if held := r.held[tag]; held != nil {
		held.holders++
	}
}

// release drops one holder of tag's context; the last forgets it.
func (r *runContexts) release(tag uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if held := r.held[tag]; held != nil {
		if held.holders--; held.holders == 0 {
			delete(r.held, tag)
		}
	}
}

// of is tag's context, or nil.
func (r *runContexts) of(tag uint64) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if held := r.held[tag]; held != nil {
		return held.ctx
	}
	return nil
}

// callContext is the context a handler runs a call under: with the values of the context of
// the call's run (tag) when it has one, done when base is (the runtime closes), and at deadline
// when it is not zero.
func (r *runContexts) callContext(base context.Context, tag uint64, deadline time.Time) (context.Context, context.CancelFunc) {
	parent := base
	if run := r.of(tag); run != nil {
		parent = context.WithoutCancel(run)
	}
	ctx, cancel := context.WithCancel(parent)
	if parent != base {
		stop := context.AfterFunc(base, cancel)
		cancelAll := cancel
		cancel = func() {
			stop()
			cancelAll()
		}
	}
	if deadline.IsZero() {
		return ctx, cancel
	}
	timed, cancelTimed := context.WithDeadline(ctx, deadline)
	return timed, func() {
		cancelTimed()
		cancel()
	}
}
