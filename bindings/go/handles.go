// The runtime/cgo handles Runlet holds as user data, counted so tests can check that every one
// is deleted (by Runlet's drop, or by a call's completion).

package runlet

import (
	"runtime/cgo"
	"sync/atomic"
)

var liveHandles atomic.Int64

func newHandle(v any) cgo.Handle {
	liveHandles.Add(1)
	return cgo.NewHandle(v)
}

func deleteHandle(h cgo.Handle) {
	h.Delete()
	liveHandles.Add(-1)
}
