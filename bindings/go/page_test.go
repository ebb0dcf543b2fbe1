// The graph page from Go (Runtime.ServePage): the run a runtime started is listed and its
// snapshot served over HTTP on loopback; a taken address is refused naming it; a closed server
// accepts no more connections.

package runlet

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestServePageShowsTheRuntimesRuns(t *testing.T) {
	rt := newTestRuntime(t, nil, Options{})
	server, err := rt.ServePage("")
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if !strings.HasPrefix(server.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL() = %q, want loopback", server.URL())
	}

	// A run started after the server is shown live, and listed from the journal.
	prog := compile(t, rt, "return [echo.value(1), echo.value(2)]\n")
	run := finished(t, rt, prog, nil)

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(server.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	var listed struct {
		Runs []struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"runs"`
	}
	status, body := get("/api/runs")
	if status != http.StatusOK {
		t.Fatalf("/api/runs: %d %s", status, body)
	}
	if err := json.Unmarshal([]byte(body), &listed); err != nil {
		t.Fatalf("/api/runs is not the runs JSON: %v: %s", err, body)
	}
	if len(listed.Runs) != 1 || listed.Runs[0].RunID != run.ID() {
		t.Fatalf("/api/runs lists %s, want the run %s", body, run.ID())
	}
	if status, body := get("/api/runs/" + run.ID()); status != http.StatusOK || !strings.Contains(body, "echo.value") {
		t.Fatalf("the run's snapshot: %d %s", status, body)
	}
	if status, _ := get("/runs/" + run.ID()); status != http.StatusOK {
		t.Fatalf("the run's page: %d", status)
	}

	taken := strings.TrimPrefix(server.URL(), "http://")
	_, err = rt.ServePage(taken)
	var failure *Error
	if !errors.As(err, &failure) || failure.Code != CodeInvalidArgument || !strings.Contains(failure.Message, taken) {
		t.Fatalf("a second server on %s: %v, want CodeInvalidArgument naming it", taken, err)
	}

	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.Dial("tcp", taken); err == nil {
		conn.Close()
		t.Fatalf("the closed server still accepts connections on %s", taken)
	}
	if err := server.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}
