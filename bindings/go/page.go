// The live graph page of a runtime's runs (docs/graph-page.md): a local HTTP server the runtime
// shows its journal's runs on, and every run it starts or resumes from then on live — what
// `runlet serve` and `runlet run --serve` serve. Needs a librunlet built with its web feature.

package runlet

// #include "runlet.h"
import "C"

import (
	"runtime"
	"sync"
)

// PageServer serves the graph page of a Runtime's runs until it is closed. Safe for concurrent
// use.
type PageServer struct {
	mu      sync.Mutex
	ptr     *C.runlet_page_server
	url     string
	cleanup runtime.Cleanup
}

// ServePage starts serving the graph page of the runtime's runs at addr ("HOST:PORT"; port 0
// picks a free one; "" for "127.0.0.1:0", loopback): the runs of its journal, and every run it
// starts or resumes from now on, live. Values are shown as Options.View allows. The server runs
// on a thread of its own and never makes a run wait; close it before the runtime. An address
// that cannot be bound is ErrInvalidArgument, naming it; a library built without the web
// feature is ErrUnsupported.
func (rt *Runtime) ServePage(addr string) (*PageServer, error) {
	var ptr *C.runlet_page_server
	err := rt.with(nil, func(r *C.runlet_runtime, _ *C.runlet_program) error {
		return errorOf(C.runlet_page_server_start(r, view(addr), &ptr))
	})
	if err != nil {
		return nil, err
	}
	server := &PageServer{ptr: ptr, url: goString(C.runlet_page_server_url(ptr))}
	server.cleanup = runtime.AddCleanup(server, func(p *C.runlet_page_server) { C.runlet_page_server_free(p) }, ptr)
	return server, nil
}

// URL is the server's address, "http://HOST:PORT": the runs page is URL+"/runs", a run's page
// URL+"/runs/"+runID.
func (s *PageServer) URL() string { return s.url }

// Close stops the server: its connections are closed before Close returns. Idempotent.
func (s *PageServer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr != nil {
		s.cleanup.Stop()
		C.runlet_page_server_free(s.ptr)
		s.ptr = nil
	}
	return nil
}
