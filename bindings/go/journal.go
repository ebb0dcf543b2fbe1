// Journals: the Journal interface a Go store implements (adapted to Runlet's journal vtable),
// the built-in SQLite journal selected with SQLite(path), the contract's errors, and
// CheckJournal, which runs Runlet's shared journal suite against a Journal.

package runlet

// #include <stdlib.h>
// #include "shims.h"
import "C"

import (
	"errors"
	"strings"
	"unsafe"
)

// Journal is a store of runs a host implements (spec §5.1): a run's header, then records
// numbered 1, 2, 3, … without gaps, appended atomically and optimistically. Its methods may
// block; calls for one run come one at a time and in order, calls for different runs
// concurrently. It acknowledges an append only once its bytes are durable and keeps them exactly
// as given. Return ErrRunExists, ErrUnknownRun, *SequenceConflict or ErrInvalidRecord for the
// contract's outcomes, any other error for a storage failure. CheckJournal tests one.
type Journal interface {
	// CreateRun stores a new run's header (JSON); a second call for one id is ErrRunExists.
	CreateRun(runID string, header []byte) error
	// Header returns the header CreateRun stored.
	Header(runID string) ([]byte, error)
	// Append stores records (sequence numbers expectedSeq+1, …) when expectedSeq is the last
	// stored one and returns the new last; otherwise *SequenceConflict and nothing is written.
	// A gap is ErrInvalidRecord.
	Append(runID string, expectedSeq uint64, records []Record) (uint64, error)
	// Read returns up to limit records after sequence number after, in order.
	Read(runID string, after uint64, limit int) ([]Record, error)
	// LoadSnapshot returns the latest snapshot, or nil.
	LoadSnapshot(runID string) (*Snapshot, error)
	// StoreSnapshot stores a snapshot; one covering records the journal lacks is
	// ErrInvalidRecord.
	StoreSnapshot(runID string, snapshot Snapshot) error
}

// RunLister is a Journal that can list its runs, for Runtime.Runs.
type RunLister interface {
	// Runs returns every run in the order they were created, with its last sequence number.
	Runs() ([]RunEntry, error)
}

// RunEntry is one run a RunLister lists.
type RunEntry struct {
	RunID   string
	LastSeq uint64
}

// Record is one journal entry: its sequence number and opaque bytes.
type Record struct {
	Seq   uint64
	Bytes []byte
}

// Snapshot covers every record up to and including UptoSeq.
type Snapshot struct {
	UptoSeq uint64
	Bytes   []byte
}

// SequenceConflict is Append's answer to a writer that is behind: Actual is the last stored
// sequence number. It matches ErrSequenceConflict.
type SequenceConflict struct {
	Actual uint64
}

func (e *SequenceConflict) Error() string { return "runlet: the journal moved on" }

// Is makes errors.Is(err, ErrSequenceConflict) match.
func (e *SequenceConflict) Is(target error) bool { return target == ErrSequenceConflict }

// Durability is what a commit of the SQLite journal survives.
type Durability uint32

const (
	// Full: a commit is on stable storage before an append returns (the default).
	Full Durability = C.RUNLET_DURABILITY_FULL
	// Normal: commits survive a process crash; a power loss may drop the last ones.
	Normal Durability = C.RUNLET_DURABILITY_NORMAL
)

// SQLiteJournal selects Runlet's built-in SQLite journal for Options.Journal: runs in one file
// (created when missing; several processes may share it).
type SQLiteJournal struct {
	Path       string
	Durability Durability
}

// SQLite selects the built-in SQLite journal in the file at path, with Full durability.
func SQLite(path string) *SQLiteJournal { return &SQLiteJournal{Path: path, Durability: Full} }

// journalError is the runlet_error for what a Journal method returned (NULL for nil); for a
// *SequenceConflict it sets *lastSeq to the actual last sequence number.
func journalError(err error, lastSeq *C.uint64_t) *C.runlet_error {
	if err == nil {
		return nil
	}
	code := C.uint32_t(C.RUNLET_ERR_JOURNAL)
	var conflict *SequenceConflict
	switch {
	case errors.As(err, &conflict):
		code = C.RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT
		if lastSeq != nil {
			*lastSeq = C.uint64_t(conflict.Actual)
		}
	case errors.Is(err, ErrRunExists):
		code = C.RUNLET_ERR_JOURNAL_RUN_EXISTS
	case errors.Is(err, ErrUnknownRun):
		code = C.RUNLET_ERR_JOURNAL_UNKNOWN_RUN
	case errors.Is(err, ErrInvalidRecord):
		code = C.RUNLET_ERR_JOURNAL_INVALID_RECORD
	}
	// Runlet names the journal's failure itself: the binding's own prefix would stand twice.
	return C.runlet_error_new(code, view(strings.TrimPrefix(err.Error(), "runlet: ")))
}

// CheckJournal runs Runlet's shared journal conformance suite (the checks its own in-memory and
// SQLite journals pass) against j, on runs it creates; nil when every check passes, else an
// *Error naming the first that failed. Blocks.
func CheckJournal(j Journal) error {
	vtable := (*C.runlet_journal_vtable)(C.calloc(1, C.sizeof_runlet_journal_vtable))
	defer C.free(unsafe.Pointer(vtable))
	C.runlet_go_fill_journal(vtable, C.uintptr_t(newHandle(j)))
	return errorOf(C.runlet_journal_conformance_check(vtable))
}
