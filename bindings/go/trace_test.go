// Trace context through the binding: a parent traceparent carried by ctx, a bad one refused, and
// (in a child process, since a process sets up export once) a run exported over OTLP/HTTP to a
// receiver on 127.0.0.1 with the handler's Call.TraceParent being the exported dispatch span.

package runlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const testTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"

func TestTraceContextTravelsInTheContext(t *testing.T) {
	if _, ok := TraceContextFrom(context.Background()); ok {
		t.Fatal("a bare context carries a trace context")
	}
	tc := TraceContext{TraceParent: "00-" + testTraceID + "-00f067aa0ba902b7-01", TraceState: "vendor=1"}
	got, ok := TraceContextFrom(WithTraceContext(context.Background(), tc))
	if !ok || got != tc {
		t.Fatalf("got %+v, %v", got, ok)
	}
}

func TestAnInvalidTraceParentIsRefused(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	prog := compile(t, rt, "return echo.value(1)\n")
	ctx := WithTraceContext(context.Background(), TraceContext{TraceParent: testTraceID})
	_, err := rt.Start(ctx, prog, nil)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "RL8107") {
		t.Fatalf("err = %v", err)
	}
	ctx = WithTraceContext(context.Background(), TraceContext{TraceParent: "00-" + testTraceID + "-00f067aa0ba902b7-01"})
	run, err := rt.Start(ctx, prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// tracedChild is set in the child process of TestARunIsExportedInTheHostsTrace.
const tracedChild = "RUNLET_TEST_TRACED_CHILD"

// tracedRun is that child: one run under a host traceparent, with OTLP export set up by the
// environment; it prints the traceparent its handler saw, then exits. It never returns.
func tracedRun() {
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "traced child: %s: %v\n", what, err)
		os.Exit(2)
	}
	var seen string
	rt, err := NewRuntime(Options{Registry: []byte(testRegistry), WorkerThreads: 2, Tools: Tools{
		"echo.value": func(_ context.Context, call *Call) (any, error) {
			seen = call.TraceParent
			return 7, nil
		},
	}})
	if err != nil {
		fail("runtime", err)
	}
	prog, err := rt.Compile("return echo.value(1)\n", nil)
	if err != nil {
		fail("compile", err)
	}
	ctx := WithTraceContext(context.Background(), TraceContext{TraceParent: "00-" + testTraceID + "-00f067aa0ba902b7-01"})
	run, err := rt.Start(ctx, prog, nil)
	if err != nil {
		fail("start", err)
	}
	if _, err := run.Wait(ctx); err != nil {
		fail("run", err)
	}
	run.Close()
	prog.Close()
	rt.Close() // sends what is pending
	fmt.Printf("TRACEPARENT=%s\n", seen)
	os.Exit(0)
}

func TestARunIsExportedInTheHostsTrace(t *testing.T) {
	var mu sync.Mutex
	var spans []otlpSpan
	services := map[string]bool{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/traces" {
			var export otlpTraces
			if err := json.Unmarshal(body, &export); err != nil {
				t.Errorf("an export that is not OTLP JSON: %v", err)
			}
			mu.Lock()
			for _, resource := range export.ResourceSpans {
				for _, attribute := range resource.Resource.Attributes {
					if attribute.Key == "service.name" {
						services[attribute.Value.StringValue] = true
					}
				}
				for _, scope := range resource.ScopeSpans {
					spans = append(spans, scope.Spans...)
				}
			}
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	defer receiver.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0])
	child.Env = append(os.Environ(), tracedChild+"=1", "OTEL_EXPORTER_OTLP_ENDPOINT="+receiver.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "OTEL_SERVICE_NAME=runlet-go-otlp-test")
	output, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, output)
	}
	match := regexp.MustCompile(`TRACEPARENT=00-` + testTraceID + `-([0-9a-f]{16})-01`).FindSubmatch(output)
	if match == nil {
		t.Fatalf("the handler saw no traceparent in the host's trace:\n%s", output)
	}
	mu.Lock()
	defer mu.Unlock()
	names := map[string]otlpSpan{}
	for _, span := range spans {
		if span.TraceID != testTraceID {
			t.Errorf("span %s is in trace %s, not the host's", span.Name, span.TraceID)
		}
		names[span.Name] = span
	}
	for _, want := range []string{"runlet.run", "runlet.session", "execute_tool echo.value", "runlet.dispatch"} {
		if _, ok := names[want]; !ok {
			t.Errorf("no %s span in %v", want, spans)
		}
	}
	if dispatch := names["runlet.dispatch"]; dispatch.SpanID != string(match[1]) {
		t.Errorf("the handler's traceparent names span %s, the dispatch is %s", match[1], dispatch.SpanID)
	}
	if anchor := names["runlet.run"]; anchor.ParentSpanID != "00f067aa0ba902b7" {
		t.Errorf("the run's parent is %q, not the host's span", anchor.ParentSpanID)
	}
	if !services["runlet-go-otlp-test"] {
		t.Errorf("services %v", services)
	}
}

// The parts of an OTLP/JSON trace export the test reads (ids are hex strings in OTLP/JSON).
type otlpTraces struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []struct {
				Key   string `json:"key"`
				Value struct {
					StringValue string `json:"stringValue"`
				} `json:"value"`
			} `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
}
