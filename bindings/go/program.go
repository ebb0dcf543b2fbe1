// The Program: source compiled by one Runtime, immutable and shareable by any number of runs.

package runlet

// #include "runlet.h"
import "C"

import (
	"runtime"
	"sync"
)

// Program is a compiled program. Safe for concurrent use; runs only on the Runtime that
// compiled it. Close it when done; its runs are unaffected.
type Program struct {
	mu      sync.RWMutex
	ptr     *C.runlet_program
	cleanup runtime.Cleanup
}

func newProgram(ptr *C.runlet_program) *Program {
	prog := &Program{ptr: ptr}
	prog.cleanup = runtime.AddCleanup(prog, func(p *C.runlet_program) { C.runlet_program_free(p) }, ptr)
	return prog
}

// handle is the C program for one call; it panics once the program is closed. The caller holds
// p.mu for reading.
func (p *Program) handle() *C.runlet_program {
	if gcStress {
		runtime.GC()
	}
	if p.ptr == nil {
		panic("runlet: the Program is closed")
	}
	return p.ptr
}

// Close frees the program. Idempotent.
func (p *Program) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ptr != nil {
		p.cleanup.Stop()
		C.runlet_program_free(p.ptr)
		p.ptr = nil
	}
	return nil
}
