// A Go journal in memory behind Runlet's journal vtable: it passes the shared journal suite, a
// broken one does not, and it backs real runs.

package runlet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// memJournal is the reference Journal: runs in maps under one lock.
type memJournal struct {
	mu           sync.Mutex
	headers      map[string][]byte
	records      map[string][]Record
	snapshots    map[string]Snapshot
	order        []string
	skipConflict bool // a broken journal the suite must catch
	appends      int
}

func newMemJournal() *memJournal {
	return &memJournal{headers: map[string][]byte{}, records: map[string][]Record{}, snapshots: map[string]Snapshot{}}
}

func (j *memJournal) CreateRun(runID string, header []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.headers[runID]; ok {
		return ErrRunExists
	}
	j.headers[runID] = append([]byte(nil), header...)
	j.order = append(j.order, runID)
	return nil
}

func (j *memJournal) Header(runID string) ([]byte, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	header, ok := j.headers[runID]
	if !ok {
		return nil, ErrUnknownRun
	}
	return header, nil
}

func (j *memJournal) Append(runID string, expected uint64, records []Record) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appends++
	if _, ok := j.headers[runID]; !ok {
		return 0, ErrUnknownRun
	}
	stored := j.records[runID]
	last := uint64(len(stored))
	if !j.skipConflict && last != expected {
		return 0, &SequenceConflict{Actual: last}
	}
	for i, r := range records {
		if r.Seq != expected+1+uint64(i) {
			return 0, fmt.Errorf("record %d has seq %d: %w", i, r.Seq, ErrInvalidRecord)
		}
	}
	for _, r := range records {
		stored = append(stored, Record{Seq: r.Seq, Bytes: append([]byte(nil), r.Bytes...)})
	}
	j.records[runID] = stored
	return uint64(len(stored)), nil
}

func (j *memJournal) Read(runID string, after uint64, limit int) ([]Record, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.headers[runID]; !ok {
		return nil, ErrUnknownRun
	}
	stored := j.records[runID]
	if after >= uint64(len(stored)) {
		return nil, nil
	}
	end := min(uint64(len(stored)), after+uint64(limit))
	return stored[after:end], nil
}

func (j *memJournal) LoadSnapshot(runID string) (*Snapshot, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.headers[runID]; !ok {
		return nil, ErrUnknownRun
	}
	snapshot, ok := j.snapshots[runID]
	if !ok {
		return nil, nil
	}
	return &snapshot, nil
}

func (j *memJournal) StoreSnapshot(runID string, snapshot Snapshot) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.headers[runID]; !ok {
		return ErrUnknownRun
	}
	if snapshot.UptoSeq > uint64(len(j.records[runID])) {
		return ErrInvalidRecord
	}
	j.snapshots[runID] = Snapshot{UptoSeq: snapshot.UptoSeq, Bytes: append([]byte(nil), snapshot.Bytes...)}
	return nil
}

func TestTheGoJournalPassesTheSharedSuite(t *testing.T) {
	journal := newMemJournal()
	if err := CheckJournal(journal); err != nil {
		t.Fatal(err)
	}
	if len(journal.headers) < 7 {
		t.Fatalf("the suite made %d runs", len(journal.headers))
	}
	broken := newMemJournal()
	broken.skipConflict = true
	err := CheckJournal(broken)
	if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "check `conflicting and gapped appends write nothing`") {
		t.Fatalf("a journal without the sequence check passed, or the failed check is not named: %v", err)
	}
}

// Runs lists the runs in the order they were created.
func (j *memJournal) Runs() ([]RunEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	entries := make([]RunEntry, 0, len(j.order))
	for _, id := range j.order {
		entries = append(entries, RunEntry{RunID: id, LastSeq: uint64(len(j.records[id]))})
	}
	return entries, nil
}

// unlistedJournal hides memJournal's Runs.
type unlistedJournal struct{ journal *memJournal }

func (u unlistedJournal) CreateRun(id string, h []byte) error { return u.journal.CreateRun(id, h) }
func (u unlistedJournal) Header(id string) ([]byte, error)    { return u.journal.Header(id) }
func (u unlistedJournal) LoadSnapshot(id string) (*Snapshot, error) {
	return u.journal.LoadSnapshot(id)
}
func (u unlistedJournal) StoreSnapshot(id string, s Snapshot) error {
	return u.journal.StoreSnapshot(id, s)
}
func (u unlistedJournal) Append(id string, expected uint64, r []Record) (uint64, error) {
	return u.journal.Append(id, expected, r)
}
func (u unlistedJournal) Read(id string, after uint64, limit int) ([]Record, error) {
	return u.journal.Read(id, after, limit)
}

// unreadableHeaders answers ErrInvalidRecord for the header of run unreadable.
type unreadableHeaders struct {
	*memJournal
	unreadable string
}

func (u unreadableHeaders) Header(id string) ([]byte, error) {
	if id == u.unreadable {
		return nil, ErrInvalidRecord
	}
	return u.memJournal.Header(id)
}

type failingJournal struct{ *memJournal }

func (failingJournal) Append(string, uint64, []Record) (uint64, error) {
	return 0, errors.New("the disk is full")
}

func TestAGoJournalBacksRuns(t *testing.T) {
	journal := newMemJournal()
	rt := newTestRuntime(t, nil, Options{Journal: journal})
	run, err := rt.Start(context.Background(), compile(t, rt, "return echo.value(\"journaled\")\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if res, err := run.Wait(context.Background()); err != nil || string(res.Value) != `"journaled"` {
		t.Fatalf("%v %v", res, err)
	}
	journal.mu.Lock()
	stored := len(journal.records[run.ID()])
	journal.mu.Unlock()
	if stored < 4 {
		t.Fatalf("%d records journaled", stored)
	}
	graph, err := rt.JournalSnapshot(compile(t, rt, "return echo.value(\"journaled\")\n"), run.ID())
	if err != nil || len(graph) == 0 {
		t.Fatalf("journal snapshot: %v", err)
	}

	runs, err := rt.Runs()
	if err != nil || len(runs) != 1 || runs[0].RunID != run.ID() || runs[0].Status != "succeeded" ||
		runs[0].LastSeq != uint64(stored) || runs[0].LastEventMs != nil {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	damaged := newTestRuntime(t, nil, Options{Journal: unreadableHeaders{journal, run.ID()}})
	runs, err = damaged.Runs()
	if err != nil || len(runs) != 1 || runs[0].Status != "damaged" || runs[0].ProgramDigest != "" ||
		runs[0].Damage == nil || runs[0].Damage.Code != "RL7004" {
		t.Fatalf("a run whose header cannot be read: %+v %v", runs, err)
	}
	unlisted := newTestRuntime(t, nil, Options{Journal: unlistedJournal{journal}})
	if _, err := unlisted.Runs(); !errors.Is(err, ErrJournal) {
		t.Fatalf("a journal without Runs listed its runs: %v", err)
	}

	failing := newTestRuntime(t, nil, Options{Journal: failingJournal{newMemJournal()}})
	_, err = runToEnd(t, failing, compile(t, failing, "return echo.value(1)\n"), nil)
	if !errors.Is(err, ErrJournal) {
		t.Fatalf("Wait: %v", err)
	}
}

func TestRunsWriteSnapshotsToAGoJournalAndResumeFromThem(t *testing.T) {
	journal := newMemJournal()
	rt := newTestRuntime(t, nil, Options{Journal: journal, SnapshotEvery: 1})
	source := "a = echo.value(1)\nb = echo.value([a, 2])\nc = echo.value([b, 3])\nreturn [a, b, c]\n"
	prog := compile(t, rt, source)
	run, err := rt.Start(context.Background(), prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	res, err := run.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	journal.mu.Lock()
	snapshot, stored := journal.snapshots[run.ID()], uint64(len(journal.records[run.ID()]))
	journal.mu.Unlock()
	if snapshot.UptoSeq == 0 || snapshot.UptoSeq >= stored || len(snapshot.Bytes) == 0 {
		t.Fatalf("snapshot at %d of %d records (%d bytes)", snapshot.UptoSeq, stored, len(snapshot.Bytes))
	}
	again, err := rt.Resume(context.Background(), prog, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if resumed, err := again.Wait(context.Background()); err != nil || string(resumed.Value) != string(res.Value) {
		t.Fatalf("resumed from the snapshot: %s %v, the run: %s", resumed.Value, err, res.Value)
	}
	if _, err := NewRuntime(Options{Registry: []byte(testRegistry), SnapshotEvery: -2}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("SnapshotEvery -2: %v", err)
	}
}
