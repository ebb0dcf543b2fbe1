// The runtime's ready queue: librunlet puts a run's token in it when the run has events queued
// or has ended, and one goroutine per runtime, waiting in C, wakes that run's goroutine. So a
// runtime holds one OS thread in C however many runs are live, where waiting in C per run
// would hold one per run (and Go stops the process at 10,000 threads).

package runlet

// #include "runlet.h"
import "C"

import (
	"errors"
	"sync"
)

type readyQueue struct {
	queue   *C.runlet_ready_queue
	mu      sync.Mutex
	wakes   map[uint64]chan<- struct{}
	next    uint64
	stopped chan struct{}
}

// newReadyQueue makes the queue and starts the goroutine that waits on it.
func newReadyQueue() (*readyQueue, error) {
	q := &readyQueue{wakes: map[uint64]chan<- struct{}{}, stopped: make(chan struct{})}
	if err := errorOf(C.runlet_ready_queue_new(&q.queue)); err != nil {
		return nil, err
	}
	go q.listen()
	return q, nil
}

// listen wakes each run whose token the queue gives, until the queue is closed.
func (q *readyQueue) listen() {
	defer close(q.stopped)
	for {
		var token C.uint64_t
		err := errorOf(C.runlet_ready_queue_next(q.queue, -1, &token))
		if errors.Is(err, ErrCancelled) {
			return
		}
		if err != nil {
			// Only a NULL argument fails otherwise, which these are not.
			panic("runlet: the ready queue failed: " + err.Error())
		}
		q.mu.Lock()
		wake := q.wakes[uint64(token)]
		q.mu.Unlock()
		if wake != nil {
			select {
			case wake <- struct{}{}:
			default: // a wake is pending already
			}
		}
	}
}

// add gives a run's wake channel a token.
func (q *readyQueue) add(wake chan<- struct{}) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.next++
	q.wakes[q.next] = wake
	return q.next
}

// remove forgets the token of a run that needs no more wakes.
func (q *readyQueue) remove(token uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.wakes, token)
}

// stop closes the queue once the runtime is freed (every run it drives has ended and queued its
// token): the goroutine hands out what is queued, then returns, and the queue is freed.
func (q *readyQueue) stop() {
	_ = errorOf(C.runlet_ready_queue_close(q.queue))
	<-q.stopped
	C.runlet_ready_queue_free(q.queue)
}
