// MCP servers attached through Options.MCP: the Python lab server of tests/mcp-servers (installed
// by scripts/install-mcp-servers, which this test runs first) answering calls beside a Go
// handler, a server that does not start, the silence timeout ending a call a server garbled, and
// the start-up timeout a server that is slow to start.

package runlet

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// labConfig installs the test servers and returns the mcpServers JSON of the lab server.
func labConfig(t *testing.T) []byte {
	t.Helper()
	return serverConfig(t, "lab", "lab_server.py", "stdio")
}

// serverConfig installs the test servers and returns the mcpServers JSON starting the test
// server script as name, with the arguments args.
func serverConfig(t *testing.T, name, script string, args ...string) []byte {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(root, "scripts/install-mcp-servers")).CombinedOutput(); err != nil {
		t.Fatalf("the MCP test servers could not be installed: %v\n%s", err, out)
	}
	dir := filepath.Join(root, "tests/mcp-servers")
	config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		name: map[string]any{"command": filepath.Join(dir, ".venv/bin/python"), "args": append([]string{filepath.Join(dir, script)}, args...)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return config
}

func TestMCPServersAnswerBesideGoHandlers(t *testing.T) {
	rt, err := NewRuntime(Options{
		Registry: []byte(`{"tools": [{"name": "host.double", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}]}`),
		Tools: Tools{"host.double": func(_ context.Context, call *Call) (any, error) {
			var args []int
			if err := json.Unmarshal(call.Args, &args); err != nil {
				return nil, err
			}
			return args[0] * 2, nil
		}},
		MCP: &MCP{Config: labConfig(t), Trusted: []string{"lab"}, AtMostOnce: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	prog := compile(t, rt, "xs = for n in [1, 2, 3] {\n  return lab.add({a: host.double(n), b: 10}).result\n}\nreturn xs\n")
	result, err := runToEnd(t, rt, prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(result.Value) != "[12,14,16]" {
		t.Fatalf("the run returned %s", result.Value)
	}
}

func TestMCPServerThatDoesNotStart(t *testing.T) {
	_, err := NewRuntime(Options{MCP: &MCP{Config: []byte(`{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}}`)}})
	var failure *Error
	if !errors.As(err, &failure) || failure.Code != CodeMCP {
		t.Fatalf("NewRuntime: %v, want CodeMCP", err)
	}
	if !strings.Contains(string(failure.Details), `"RL8602"`) || !strings.Contains(failure.Message, "gone") {
		t.Fatalf("the error does not name the server and its code: %s %s", failure.Message, failure.Details)
	}
}

// A server that garbles its answer, which the transport drops: the call fails with RL6102 once
// the silence timeout passes, instead of waiting for ever.
func TestMCPCallItsServerGoesSilentOnFailsAtTheSilenceTimeout(t *testing.T) {
	rt, err := NewRuntime(Options{MCP: &MCP{
		Config:         serverConfig(t, "rogue", "rogue_server.py", "garbled-result"),
		SilenceTimeout: 600 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	// runToEnd's wait is bounded, so a timeout that did not reach the library fails the test
	// instead of hanging it.
	_, err = runToEnd(t, rt, compile(t, rt, "return rogue.echo({})\n"), nil)
	var failure *Error
	if !errors.As(err, &failure) || !errors.Is(err, ErrToolFailed) || !strings.Contains(string(failure.Details), "RL6102") {
		t.Fatalf("Wait: %v, want a tool failure RL6102", err)
	}
	if !strings.Contains(failure.Message, "for 600 ms") {
		t.Fatalf("the error does not name the timeout: %s", failure.Message)
	}
}

// A server that answers nothing for 3 s after it starts, given 300 ms: CodeMCP (RL8602), naming
// the time it had.
func TestMCPServerSlowerThanTheStartupTimeout(t *testing.T) {
	_, err := NewRuntime(Options{MCP: &MCP{
		Config:         serverConfig(t, "slow", "rogue_server.py", "slow-start", "3"),
		StartupTimeout: 300 * time.Millisecond,
	}})
	var failure *Error
	if !errors.As(err, &failure) || failure.Code != CodeMCP || !strings.Contains(string(failure.Details), `"RL8602"`) {
		t.Fatalf("NewRuntime: %v, want CodeMCP with RL8602", err)
	}
	if !strings.Contains(failure.Message, "within 300 ms") {
		t.Fatalf("the error does not name the timeout: %s", failure.Message)
	}
	_, err = NewRuntime(Options{MCP: &MCP{Config: labConfig(t), StartupTimeout: -time.Second}})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a negative StartupTimeout: %v, want CodeInvalidArgument", err)
	}
}
