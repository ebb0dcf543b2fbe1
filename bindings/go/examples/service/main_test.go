package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheServiceRunsProgramsAndShowsTheirGraphs(t *testing.T) {
	s, err := newService(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	server := httptest.NewServer(s.routes())
	defer server.Close()

	resp, err := http.Post(server.URL+"/run/weather", "application/json", strings.NewReader(`{"cities": ["Lisbon", "Oslo"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ran struct {
		RunID string          `json:"run_id"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ran); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if string(ran.Value) != `[{"celsius":18.5,"city":"Lisbon"},{"celsius":12.5,"city":"Oslo"}]` {
		t.Fatalf("value %s", ran.Value)
	}
	graph, err := http.Get(server.URL + "/graph/weather/" + ran.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer graph.Body.Close()
	body, _ := io.ReadAll(graph.Body)
	if graph.StatusCode != http.StatusOK || !strings.Contains(string(body), `"weather.now"`) {
		t.Fatalf("graph %d: %s", graph.StatusCode, body)
	}
	missing, err := http.Get(server.URL + "/graph/weather/r-unknown")
	if err != nil {
		t.Fatal(err)
	}
	missing.Body.Close()
	if missing.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown run gives %d", missing.StatusCode)
	}
	bad, err := http.Post(server.URL+"/run/weather", "application/json", strings.NewReader(`{"cities": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad inputs give %d", bad.StatusCode)
	}
}
