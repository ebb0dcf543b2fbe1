// Recovery at start: RecoverInterrupted resumes every interrupted run of the runtime's journal
// (each compiled again from what its journal retains), parks those resumed too often, and says
// why it leaves the others.

package runlet

// #include "shims.h"
import "C"

import (
	"context"
	"encoding/json"
)

// RecoveryAction is what recovery at start did with one interrupted run.
type RecoveryAction string

const (
	// RecoveryResumed: the run goes on; RestartedRun.Run follows it.
	RecoveryResumed RecoveryAction = "resumed"
	// RecoveryParked: it was resumed RestartedRun.Resumes times without ending, and is now failed
	// (RL7306) instead of resumed once more.
	RecoveryParked RecoveryAction = "parked"
	// RecoveryLeft: left for an operator, for the reason RestartedRun.Code and Message give — such
	// as RL8405, calls that need a decision (Uncertain, then ResolveApplied and the like), RL7008,
	// a run whose header or last record is damaged, RL7010, a run another process claimed since
	// it was listed, or a run of another registry.
	RecoveryLeft RecoveryAction = "left"
)

// RestartedRun is one interrupted run and what recovery at start did with it.
type RestartedRun struct {
	RunID   string         `json:"run_id"`
	Action  RecoveryAction `json:"outcome"`
	Resumes int            `json:"resumes"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	// Run follows a resumed run (nil otherwise); Close it when done.
	Run *Run `json:"-"`
}

// RecoverInterrupted resumes every interrupted run of the runtime's journal that this runtime
// can run, in the order the runs were created, parking as failed those already resumed
// maxResumes times: what a host calls once after NewRuntime, so the runs its last process left
// go on. When ctx is done the resumed runs are cancelled (when it is done already, nothing is
// resumed and its error returned). Fails only when the journal cannot
// list its runs. Blocks while it replays each run.
func (rt *Runtime) RecoverInterrupted(ctx context.Context, maxResumes int) ([]RestartedRun, error) {
	if maxResumes < 0 {
		return nil, invalid("maxResumes is %d: give how many resumes a run may have", maxResumes)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var resumed []*C.runlet_run
	var report []byte
	handle := newHandle(&resumed)
	defer deleteHandle(handle)
	runs := map[string]*Run{}
	tag := rt.tools.runs.hold(ctx)
	defer rt.tools.runs.release(tag)
	err := rt.with(nil, func(r *C.runlet_runtime, _ *C.runlet_program) error {
		return runOptions(ctx, tag, func(options *C.runlet_run_options) error {
			var buf C.runlet_buf
			err := errorOf(C.runlet_go_recover_interrupted(r, C.uint32_t(maxResumes), options, C.uintptr_t(handle), &buf))
			report = takeBuf(buf)
			for _, ptr := range resumed {
				run := launch(ctx, rt, ptr, tag)
				runs[run.ID()] = run
			}
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	var recovered []RestartedRun
	if err := json.Unmarshal(report, &recovered); err != nil {
		return nil, invalid("the recovery report does not decode: %v", err)
	}
	for i := range recovered {
		recovered[i].Run = runs[recovered[i].RunID]
	}
	return recovered, nil
}
