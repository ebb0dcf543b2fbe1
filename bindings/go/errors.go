// Errors: *Error carries a Runlet error code (RUNLET_ERR_* of runlet.h), its message and
// details; the sentinels match by code through errors.Is. *ToolError is what a handler returns
// for a coded tool failure; *CompileError lists a program's diagnostics.

package runlet

// #include "runlet.h"
import "C"

import (
	"encoding/json"
	"fmt"
	"time"
)

// Code is a Runlet error code. New codes may appear; treat unknown ones as CodeInternal.
type Code uint32

// The codes of runlet.h.
const (
	CodeInvalidArgument         Code = C.RUNLET_ERR_INVALID_ARGUMENT
	CodeNullArgument            Code = C.RUNLET_ERR_NULL_ARGUMENT
	CodeInvalidUTF8             Code = C.RUNLET_ERR_INVALID_UTF8
	CodeInvalidJSON             Code = C.RUNLET_ERR_INVALID_JSON
	CodeCompile                 Code = C.RUNLET_ERR_COMPILE
	CodeScript                  Code = C.RUNLET_ERR_SCRIPT
	CodeToolFailed              Code = C.RUNLET_ERR_TOOL_FAILED
	CodeJournal                 Code = C.RUNLET_ERR_JOURNAL
	CodeCancelled               Code = C.RUNLET_ERR_CANCELLED
	CodeTimeout                 Code = C.RUNLET_ERR_TIMEOUT
	CodeAlreadyCompleted        Code = C.RUNLET_ERR_ALREADY_COMPLETED
	CodeVersionMismatch         Code = C.RUNLET_ERR_VERSION_MISMATCH
	CodePanic                   Code = C.RUNLET_ERR_PANIC
	CodeInternal                Code = C.RUNLET_ERR_INTERNAL
	CodeNotFinished             Code = C.RUNLET_ERR_NOT_FINISHED
	CodeUnsupported             Code = C.RUNLET_ERR_UNSUPPORTED
	CodeRegistry                Code = C.RUNLET_ERR_REGISTRY
	CodeJournalRunExists        Code = C.RUNLET_ERR_JOURNAL_RUN_EXISTS
	CodeJournalUnknownRun       Code = C.RUNLET_ERR_JOURNAL_UNKNOWN_RUN
	CodeJournalSequenceConflict Code = C.RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT
	CodeJournalInvalidRecord    Code = C.RUNLET_ERR_JOURNAL_INVALID_RECORD
	CodeLimit                   Code = C.RUNLET_ERR_LIMIT
	CodeMCP                     Code = C.RUNLET_ERR_MCP
)

// Sentinels for errors.Is: an *Error matches the sentinel of its code.
var (
	ErrInvalidArgument  = &Error{Code: CodeInvalidArgument}
	ErrInvalidJSON      = &Error{Code: CodeInvalidJSON}
	ErrCompile          = &Error{Code: CodeCompile}
	ErrScript           = &Error{Code: CodeScript}
	ErrToolFailed       = &Error{Code: CodeToolFailed}
	ErrJournal          = &Error{Code: CodeJournal}
	ErrCancelled        = &Error{Code: CodeCancelled}
	ErrTimeout          = &Error{Code: CodeTimeout}
	ErrAlreadyCompleted = &Error{Code: CodeAlreadyCompleted}
	ErrVersionMismatch  = &Error{Code: CodeVersionMismatch}
	ErrPanic            = &Error{Code: CodePanic}
	ErrUnsupported      = &Error{Code: CodeUnsupported}
	ErrRegistry         = &Error{Code: CodeRegistry}
	ErrLimit            = &Error{Code: CodeLimit}
	ErrRunExists        = &Error{Code: CodeJournalRunExists}
	ErrUnknownRun       = &Error{Code: CodeJournalUnknownRun}
	ErrInvalidRecord    = &Error{Code: CodeJournalInvalidRecord}
	ErrSequenceConflict = &Error{Code: CodeJournalSequenceConflict}
)

// Error is an error Runlet reported: its code, message and details (JSON; for a failed run the
// error record, for a compile error the diagnostics report). When a tool handler's own error
// failed the run, Unwrap returns it, so errors.As finds it through Wait.
type Error struct {
	Code    Code
	Message string
	Details json.RawMessage
	cause   error
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "runlet: " + e.Code.String()
	}
	return "runlet: " + e.Message
}

// codeNames are the codes' names, as a sentinel's Error shows them.
var codeNames = map[Code]string{
	CodeInvalidArgument:         "invalid argument",
	CodeNullArgument:            "null argument",
	CodeInvalidUTF8:             "invalid UTF-8",
	CodeInvalidJSON:             "invalid JSON",
	CodeCompile:                 "the program does not compile",
	CodeScript:                  "the program failed",
	CodeToolFailed:              "a tool call failed",
	CodeJournal:                 "the journal failed",
	CodeCancelled:               "cancelled",
	CodeTimeout:                 "timed out",
	CodeAlreadyCompleted:        "already completed",
	CodeVersionMismatch:         "version mismatch",
	CodePanic:                   "panicked",
	CodeInternal:                "internal error",
	CodeNotFinished:             "not finished",
	CodeUnsupported:             "unsupported",
	CodeRegistry:                "invalid registry",
	CodeJournalRunExists:        "the run exists already",
	CodeJournalUnknownRun:       "unknown run",
	CodeJournalSequenceConflict: "sequence conflict",
	CodeJournalInvalidRecord:    "invalid journal record",
	CodeLimit:                   "limit crossed",
	CodeMCP:                     "MCP server failed",
}

// String names the code: "already completed", "error code 99" for one this binding does not know.
func (c Code) String() string {
	if name, ok := codeNames[c]; ok {
		return name
	}
	return fmt.Sprintf("error code %d", uint32(c))
}

// Unwrap returns the handler's error that failed the run, if one did.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is the sentinel of e's code; a null argument (a nil Program, say)
// matches ErrInvalidArgument too.
func (e *Error) Is(target error) bool {
	sentinel, ok := target.(*Error)
	if !ok || sentinel.Message != "" || sentinel.Details != nil {
		return false
	}
	return sentinel.Code == e.Code || (sentinel.Code == CodeInvalidArgument && e.Code == CodeNullArgument)
}

// errorOf copies a runlet_error Runlet returned and frees it; nil for NULL.
func errorOf(err *C.runlet_error) error {
	if err == nil {
		return nil
	}
	defer C.runlet_error_free(err)
	e := &Error{Code: Code(C.runlet_error_code(err)), Message: goString(C.runlet_error_message(err))}
	if details := goString(C.runlet_error_details_json(err)); details != "" {
		e.Details = json.RawMessage(details)
	}
	return e
}

// invalid is the error for a bad argument the binding itself refuses.
func invalid(format string, args ...any) error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// ToolError is a coded tool failure a handler returns (spec §3.5): the tool's own stable Code
// (such as "RATE_LIMITED"), a message, whether retrying may succeed, how long the tool asks to
// wait first (0 for no hint) and details.
type ToolError struct {
	Code       string
	Message    string
	Retryable  bool
	RetryAfter time.Duration
	Details    map[string]any
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// cError builds the runlet_error that fails a call with e.
func (e *ToolError) cError() *C.runlet_error {
	details := ""
	if len(e.Details) > 0 {
		encoded, err := json.Marshal(e.Details)
		if err != nil {
			return hostError(fmt.Errorf("the details of tool error %s do not encode: %w", e.Code, err), "")
		}
		details = string(encoded)
	}
	retryAfter := int64(-1)
	if e.RetryAfter > 0 {
		retryAfter = e.RetryAfter.Milliseconds()
	}
	return C.runlet_error_new_tool(view(e.Code), view(e.Message), C.bool(e.Retryable), C.int64_t(retryAfter),
		view(details))
}

// hostError builds the HOST_ERROR tool error for any other error a handler returns; detailsJSON
// carries the binding's id for the original error, or is empty.
func hostError(err error, detailsJSON string) *C.runlet_error {
	return C.runlet_error_new_tool(view("HOST_ERROR"), view(err.Error()), false, -1, view(detailsJSON))
}

// Diagnostic is one compile diagnostic (INTERFACES.md §1).
type Diagnostic struct {
	Code     string   `json:"code"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
	Span     Span     `json:"span"`
	Help     []string `json:"help"`
}

// Span is where a diagnostic points: byte offsets into the source, 1-based line and column.
type Span struct {
	Start  int `json:"start"`
	End    int `json:"end"`
	Line   int `json:"line"`
	Column int `json:"column"`
}

// CompileError is a program that does not compile; Diagnostics come in source order.
type CompileError struct {
	Diagnostics []Diagnostic
	err         *Error
}

func (e *CompileError) Error() string { return e.err.Error() }

// Unwrap returns the *Error with CodeCompile and the full report as details.
func (e *CompileError) Unwrap() error { return e.err }
