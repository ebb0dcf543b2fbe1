// The Go host's journal: runs kept in this process's memory behind runlet.Journal, which can
// stop taking appends to crash the runtime using it.

package main

import (
	"bytes"
	"errors"
	"sync"

	runlet "example.invalid/runlet/bindings/go"
)

type storedRun struct {
	header   []byte
	records  []runlet.Record
	snapshot *runlet.Snapshot
}

type memoryJournal struct {
	mu          sync.Mutex
	runs        map[string]*storedRun
	order       []string
	appendsLeft int64 // -1: every append is taken
}

var errStopped = errors.New("the host stopped the runtime here")

func newMemoryJournal() *memoryJournal {
	return &memoryJournal{runs: map[string]*storedRun{}, appendsLeft: -1}
}

// stopAfter makes the journal take appends more appends and refuse every later one; -1 takes all.
func (j *memoryJournal) stopAfter(appends int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appendsLeft = appends
}

func (j *memoryJournal) run(id string) (*storedRun, error) {
	r, ok := j.runs[id]
	if !ok {
		return nil, runlet.ErrUnknownRun
	}
	return r, nil
}

func (r *storedRun) lastSeq() uint64 {
	if len(r.records) == 0 {
		return 0
	}
	return r.records[len(r.records)-1].Seq
}

func (j *memoryJournal) CreateRun(runID string, header []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.runs[runID]; ok {
		return runlet.ErrRunExists
	}
	j.runs[runID] = &storedRun{header: bytes.Clone(header)}
	j.order = append(j.order, runID)
	return nil
}

func (j *memoryJournal) Header(runID string) ([]byte, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, err := j.run(runID)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(r.header), nil
}

func (j *memoryJournal) Append(runID string, expectedSeq uint64, records []runlet.Record) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.appendsLeft == 0 {
		return 0, errStopped
	}
	r, err := j.run(runID)
	if err != nil {
		return 0, err
	}
	if expectedSeq != r.lastSeq() {
		return 0, &runlet.SequenceConflict{Actual: r.lastSeq()}
	}
	for i, record := range records {
		if record.Seq != expectedSeq+1+uint64(i) {
			return 0, runlet.ErrInvalidRecord
		}
	}
	for _, record := range records {
		r.records = append(r.records, runlet.Record{Seq: record.Seq, Bytes: bytes.Clone(record.Bytes)})
	}
	if j.appendsLeft > 0 {
		j.appendsLeft--
	}
	return r.lastSeq(), nil
}

func (j *memoryJournal) Read(runID string, after uint64, limit int) ([]runlet.Record, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, err := j.run(runID)
	if err != nil {
		return nil, err
	}
	var out []runlet.Record
	for _, record := range r.records {
		if record.Seq > after && len(out) < limit {
			out = append(out, record)
		}
	}
	return out, nil
}

func (j *memoryJournal) LoadSnapshot(runID string) (*runlet.Snapshot, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, err := j.run(runID)
	if err != nil {
		return nil, err
	}
	return r.snapshot, nil
}

func (j *memoryJournal) StoreSnapshot(runID string, snapshot runlet.Snapshot) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, err := j.run(runID)
	if err != nil {
		return err
	}
	if snapshot.UptoSeq == 0 || snapshot.UptoSeq > r.lastSeq() {
		return runlet.ErrInvalidRecord
	}
	r.snapshot = &runlet.Snapshot{UptoSeq: snapshot.UptoSeq, Bytes: bytes.Clone(snapshot.Bytes)}
	return nil
}

func (j *memoryJournal) Runs() ([]runlet.RunEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	entries := make([]runlet.RunEntry, 0, len(j.order))
	for _, id := range j.order {
		entries = append(entries, runlet.RunEntry{RunID: id, LastSeq: j.runs[id].lastSeq()})
	}
	return entries, nil
}
