// Every function C calls into Go (through the trampolines of shims.c): the executor's invoke,
// recover and drop, a call's cancellation, the journal vtable, the runs recovery at start resumes. Each recovers a panic into a
// failed call or a returned error; none returns a Go pointer.

package runlet

// #include "runlet.h"
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// runletGoResumed collects a run that recovery at start resumed, for RecoverInterrupted.
//
//export runletGoResumed
func runletGoResumed(handle C.uintptr_t, run *C.runlet_run) {
	resumed := cgo.Handle(handle).Value().(*[]*C.runlet_run)
	*resumed = append(*resumed, run)
}

// panicked is the error a journal callback returns for a panic in Go code.
func panicked(what string, r any) *C.runlet_error {
	return C.runlet_error_new(C.RUNLET_ERR_PANIC, view(fmt.Sprintf("the Go %s panicked: %v", what, r)))
}

//export runletGoInvoke
func runletGoInvoke(handle C.uintptr_t, token *C.runlet_tool_call) {
	defer func() {
		if r := recover(); r != nil {
			C.runlet_tool_call_fail(token, panicked("executor", r))
		}
	}()
	ex := cgo.Handle(handle).Value().(*executor)
	ex.start(token, ex.dispatch)
}

//export runletGoRecover
func runletGoRecover(handle C.uintptr_t, token *C.runlet_tool_call) {
	defer func() {
		if r := recover(); r != nil {
			C.runlet_tool_call_fail(token, panicked("executor", r))
		}
	}()
	ex := cgo.Handle(handle).Value().(*executor)
	ex.start(token, ex.recovery)
}

//export runletGoCancelled
func runletGoCancelled(handle C.uintptr_t) {
	defer func() { _ = recover() }()
	cgo.Handle(handle).Value().(*Call).acknowledgeCancel()
}

// runletGoRelease is the drop of the executor and of Go journals: called exactly once, after
// their last callback, also when the runtime could not be built.
//
//export runletGoRelease
func runletGoRelease(handle C.uintptr_t) {
	defer func() { _ = recover() }()
	h := cgo.Handle(handle)
	if ex, ok := h.Value().(*executor); ok {
		ex.stop()
	}
	deleteHandle(h)
}

func journalOf(handle C.uintptr_t) Journal { return cgo.Handle(handle).Value().(Journal) }

//export runletGoCreateRun
func runletGoCreateRun(handle C.uintptr_t, runID, header C.runlet_str) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	return journalError(journalOf(handle).CreateRun(goString(runID), []byte(goString(header))), nil)
}

//export runletGoHeader
func runletGoHeader(handle C.uintptr_t, runID C.runlet_str, sink *C.runlet_journal_sink) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	header, err := journalOf(handle).Header(goString(runID))
	if err != nil {
		return journalError(err, nil)
	}
	return C.runlet_journal_sink_push(sink, 0, bytesView(header))
}

//export runletGoAppend
func runletGoAppend(handle C.uintptr_t, runID C.runlet_str, expected C.uint64_t, records *C.runlet_journal_record,
	count C.size_t, lastSeq *C.uint64_t) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	batch := make([]Record, int(count))
	for i, r := range unsafe.Slice(records, int(count)) {
		batch[i] = Record{Seq: uint64(r.seq), Bytes: goBytes(r.bytes)}
	}
	last, err := journalOf(handle).Append(goString(runID), uint64(expected), batch)
	if err != nil {
		return journalError(err, lastSeq)
	}
	*lastSeq = C.uint64_t(last)
	return nil
}

//export runletGoRead
func runletGoRead(handle C.uintptr_t, runID C.runlet_str, after C.uint64_t, limit C.size_t,
	sink *C.runlet_journal_sink) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	records, err := journalOf(handle).Read(goString(runID), uint64(after), int(min(limit, C.size_t(maxInt))))
	if err != nil {
		return journalError(err, nil)
	}
	for _, r := range records {
		if failure := C.runlet_journal_sink_push(sink, C.uint64_t(r.Seq), bytesView(r.Bytes)); failure != nil {
			return failure
		}
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

//export runletGoLoadSnapshot
func runletGoLoadSnapshot(handle C.uintptr_t, runID C.runlet_str, sink *C.runlet_journal_sink) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	snapshot, err := journalOf(handle).LoadSnapshot(goString(runID))
	if err != nil || snapshot == nil {
		return journalError(err, nil)
	}
	return C.runlet_journal_sink_push(sink, C.uint64_t(snapshot.UptoSeq), bytesView(snapshot.Bytes))
}

//export runletGoStoreSnapshot
func runletGoStoreSnapshot(handle C.uintptr_t, runID C.runlet_str, upto C.uint64_t, bytes C.runlet_bytes) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	snapshot := Snapshot{UptoSeq: uint64(upto), Bytes: goBytes(bytes)}
	return journalError(journalOf(handle).StoreSnapshot(goString(runID), snapshot), nil)
}

//export runletGoRuns
func runletGoRuns(handle C.uintptr_t, sink *C.runlet_journal_sink) (failure *C.runlet_error) {
	defer func() {
		if r := recover(); r != nil {
			failure = panicked("journal", r)
		}
	}()
	lister, ok := journalOf(handle).(RunLister)
	if !ok {
		return C.runlet_error_new(C.RUNLET_ERR_JOURNAL, view("this Go journal cannot list its runs: it implements no runlet.RunLister"))
	}
	entries, err := lister.Runs()
	if err != nil {
		return journalError(err, nil)
	}
	for _, entry := range entries {
		if failure := C.runlet_journal_sink_push(sink, C.uint64_t(entry.LastSeq), bytesView([]byte(entry.RunID))); failure != nil {
			return failure
		}
	}
	return nil
}
