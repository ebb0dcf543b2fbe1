// Runs by id in the runtime's journal: the operations a crash left uncertain and the host's
// decisions about them (each journaled; the next Resume applies them), and a run's graph as the
// journal records it.

package runlet

// #include "runlet.h"
import "C"

import "encoding/json"

// UncertainOperation is a call an interrupted run left dispatching.
type UncertainOperation struct {
	OperationID string `json:"operation_id"`
	Node        string `json:"node"`
	Tool        string `json:"tool"`
	Class       string `json:"class"` // the tool's execution class, such as "at_most_once"
	DispatchID  string `json:"dispatch_id"`
	PreparedSeq uint64 `json:"prepared_seq"` // of its CallDispatchPrepared event
	Generation  uint32 `json:"generation"`
	// NeedsDecision: a resume leaves it to the host (at_most_once and unsafe tools); until
	// decided the resumed run fails with RL6109. Other classes are redispatched or recovered.
	NeedsDecision bool `json:"needs_decision"`
}

// Uncertain lists the operations run runID of prog left uncertain, in node order; none once the
// journal records the run's end. A run this runtime is driving is refused (RL7010) until it
// ends. Blocks while the journal is read.
func (rt *Runtime) Uncertain(prog *Program, runID string) ([]UncertainOperation, error) {
	var listed []UncertainOperation
	err := rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		var buf C.runlet_buf
		if err := errorOf(C.runlet_run_uncertain_json(r, p, view(runID), nil, &buf)); err != nil {
			return err
		}
		return json.Unmarshal(takeBuf(buf), &listed)
	})
	return listed, err
}

// ResolveApplied journals that the uncertain operation took effect with output (encoded with
// encoding/json; it must match the tool's output schema): the resumed call succeeds with it.
func (rt *Runtime) ResolveApplied(prog *Program, runID, operationID string, output any) error {
	encoded, err := json.Marshal(output)
	if err != nil {
		return invalid("the output does not encode as JSON: %v", err)
	}
	return rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		return errorOf(C.runlet_run_resolve_applied(r, p, view(runID), nil, view(operationID), view(string(encoded))))
	})
}

// ResolveNotApplied journals that the uncertain operation did not take effect: the resumed run
// dispatches it again under the same operation id (refused for unsafe tools).
func (rt *Runtime) ResolveNotApplied(prog *Program, runID, operationID string) error {
	return rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		return errorOf(C.runlet_run_resolve_not_applied(r, p, view(runID), nil, view(operationID)))
	})
}

// ResolveFailed journals that the uncertain operation failed with failure: the resumed call
// fails with it, no longer uncertain.
func (rt *Runtime) ResolveFailed(prog *Program, runID, operationID string, failure *ToolError) error {
	if failure == nil {
		return invalid("ResolveFailed needs the failure")
	}
	return rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		return errorOf(C.runlet_run_resolve_failed(r, p, view(runID), nil, view(operationID), failure.cError()))
	})
}

// AuthorizeFreshGeneration journals the host's authorization to run the uncertain operation of
// an unsafe tool again under a new operation id, which it returns.
func (rt *Runtime) AuthorizeFreshGeneration(prog *Program, runID, operationID string) (string, error) {
	var fresh string
	err := rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		var buf C.runlet_buf
		err := errorOf(C.runlet_run_authorize_fresh_generation(r, p, view(runID), nil, view(operationID), &buf))
		fresh = string(takeBuf(buf))
		return err
	})
	return fresh, err
}

// CancelInterrupted journals the cancellation of run runID, which no process is running: its
// calls left dispatching are abandoned and a resume ends at once, cancelled. A run that has
// ended is refused (ErrInvalidArgument, RL8404). Run.Cancel cancels a run of this process.
func (rt *Runtime) CancelInterrupted(prog *Program, runID string) error {
	return rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		return errorOf(C.runlet_run_cancel_interrupted(r, p, view(runID), nil))
	})
}

// RunSummary is one run of a journal as Runtime.Runs lists it.
type RunSummary struct {
	RunID string `json:"run_id"`
	// running, interrupted, succeeded, failed, cancelled, or damaged: its header or last record
	// cannot be read, and Damage says why.
	Status        string     `json:"status"`
	ProgramDigest string     `json:"program_digest"` // empty when its header is damaged
	StartedMs     *int64     `json:"started_ms"`     // Unix milliseconds, where the journal keeps it
	LastSeq       uint64     `json:"last_seq"`       // of its last event
	LastEventMs   *int64     `json:"last_event_ms"`  // Unix milliseconds, where the journal keeps it
	Damage        *RunDamage `json:"damage,omitempty"`
}

// RunDamage is what the journal answered when a damaged run's header or last record was read.
type RunDamage struct {
	Code    string `json:"code"` // RL7008 for a damaged store, RL7004 for ErrInvalidRecord
	Message string `json:"message"`
}

// Runs lists the runs of the runtime's journal in the order they were created, with the status
// the journal alone tells (Uncertain tells whether an interrupted one needs a decision). A run
// whose header or last record cannot be read is listed as damaged, and hides no other. The
// in-memory and SQLite journals list their runs, and a Go Journal that is a RunLister;
// another gives ErrJournal. Blocks while the journal is read.
func (rt *Runtime) Runs() ([]RunSummary, error) {
	var listed struct {
		Runs []RunSummary `json:"runs"`
	}
	err := rt.with(nil, func(r *C.runlet_runtime, _ *C.runlet_program) error {
		var buf C.runlet_buf
		if err := errorOf(C.runlet_runtime_runs_json(r, &buf)); err != nil {
			return err
		}
		return json.Unmarshal(takeBuf(buf), &listed)
	})
	return listed.Runs, err
}

// JournalSnapshot is the graph of run runID of prog as the journal records it (the JSON of
// Run.Snapshot), for a run this process does not follow: another process's, an interrupted or a
// finished one. Blocks while the journal is read.
func (rt *Runtime) JournalSnapshot(prog *Program, runID string) (json.RawMessage, error) {
	var graph json.RawMessage
	err := rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		var buf C.runlet_buf
		err := errorOf(C.runlet_run_journal_snapshot_json(r, p, view(runID), &buf))
		graph = takeBuf(buf)
		return err
	})
	return graph, err
}
