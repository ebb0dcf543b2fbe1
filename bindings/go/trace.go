// Trace context across the binding (docs/tracing.md): a run started under a ctx that carries a
// W3C trace context continues that trace, and each tool call carries the traceparent of its
// dispatch span (Call.TraceParent) for the handler's own spans or outgoing requests.

package runlet

// #include <stdlib.h>
// #include "runlet.h"
import "C"

import (
	"context"
	"unsafe"
)

// TraceContext is a W3C Trace Context: the traceparent header
// ("00-<trace id>-<span id>-<flags>") and the optional tracestate that goes with it.
type TraceContext struct {
	TraceParent string
	TraceState  string
}

type traceContextKey struct{}

// WithTraceContext returns a copy of ctx carrying tc: a run Runtime.Start starts with it is a
// child of that span in the host's trace. With OpenTelemetry, take tc from
// the propagator:
//
//	carrier := propagation.MapCarrier{}
//	propagation.TraceContext{}.Inject(ctx, carrier)
//	ctx = runlet.WithTraceContext(ctx, runlet.TraceContext{TraceParent: carrier["traceparent"], TraceState: carrier["tracestate"]})
//
// An invalid traceparent makes the start fail with ErrInvalidArgument (RL8107).
func WithTraceContext(ctx context.Context, tc TraceContext) context.Context {
	return context.WithValue(ctx, traceContextKey{}, tc)
}

// TraceContextFrom is the trace context ctx carries (WithTraceContext), if any.
func TraceContextFrom(ctx context.Context) (TraceContext, bool) {
	tc, ok := ctx.Value(traceContextKey{}).(TraceContext)
	return tc, ok
}

// runOptions calls use with the C run options of a run started or resumed under ctx: its
// events queued for Run.Events, the tag of its context for its calls (tag), and its trace
// context when ctx carries one (which a resume ignores).
func runOptions(ctx context.Context, tag uint64, use func(*C.runlet_run_options) error) error {
	options := (*C.runlet_run_options)(C.calloc(1, C.sizeof_runlet_run_options))
	defer cFree(unsafe.Pointer(options))
	options.struct_size = C.sizeof_runlet_run_options
	options.pull_events = true
	options.host_tag = C.uint64_t(tag)
	if tc, ok := TraceContextFrom(ctx); ok {
		options.traceparent = cCopy(tc.TraceParent)
		defer cFree(unsafe.Pointer(options.traceparent.ptr))
		options.tracestate = cCopy(tc.TraceState)
		defer cFree(unsafe.Pointer(options.tracestate.ptr))
	}
	return use(options)
}
