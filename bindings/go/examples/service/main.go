// Command service is a small HTTP service over Runlet: it compiles its agent programs once at
// start, runs one per request with Go tool handlers, and shows the graph of any run it made.
//
//	go run -tags runlet_dev ./examples/service -addr 127.0.0.1:8080 -journal runs.db
//	curl -s -X POST localhost:8080/run/weather -d '{"cities": ["Lisbon", "Oslo"]}'
//	curl -s localhost:8080/graph/weather/RUN_ID
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	runlet "example.invalid/runlet/bindings/go"
)

const registry = `{"tools": [
  {"name": "weather.now", "params": [{"name": "city", "schema": {"type": "string"}}],
   "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
   "execution": "idempotent"}
], "inputs": {"cities": {"type": "array", "items": {"type": "string"}}}}`

// programs are the service's agent programs by name.
var programs = map[string]string{
	"weather": "readings = for city in cities limit 4 {\n    w = weather.now(city)\n    return { city, celsius: w.celsius }\n}\nreturn readings\n",
}

// weatherNow is the Go tool: a made-up temperature from the city's name.
func weatherNow(ctx context.Context, call *runlet.Call) (any, error) {
	var args []string
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(5 * time.Millisecond):
	}
	return map[string]any{"celsius": float64(len(args[0])*3%25) + 0.5}, nil
}

// service serves runs of its compiled programs.
type service struct {
	rt       *runlet.Runtime
	programs map[string]*runlet.Program
}

func newService(journal string) (*service, error) {
	opts := runlet.Options{Registry: []byte(registry), Tools: runlet.Tools{"weather.now": weatherNow}}
	if journal != "" {
		opts.Journal = runlet.SQLite(journal)
	}
	rt, err := runlet.NewRuntime(opts)
	if err != nil {
		return nil, err
	}
	s := &service{rt: rt, programs: map[string]*runlet.Program{}}
	for name, source := range programs {
		prog, err := rt.Compile(source, nil)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		s.programs[name] = prog
	}
	return s, nil
}

func (s *service) Close() {
	for _, prog := range s.programs {
		prog.Close()
	}
	s.rt.Close()
}

func (s *service) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /run/{program}", s.run)
	mux.HandleFunc("GET /graph/{program}/{run}", s.graph)
	return mux
}

// run runs a program with the request body's JSON object as its inputs; the request's context
// cancels the run when the client goes away.
func (s *service) run(w http.ResponseWriter, r *http.Request) {
	prog, ok := s.programs[r.PathValue("program")]
	if !ok {
		http.Error(w, "no such program", http.StatusNotFound)
		return
	}
	var inputs map[string]any
	if err := json.NewDecoder(r.Body).Decode(&inputs); err != nil {
		http.Error(w, "the body is not a JSON object: "+err.Error(), http.StatusBadRequest)
		return
	}
	run, err := s.rt.Start(r.Context(), prog, inputs)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer run.Close()
	res, err := run.Wait(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"run_id": run.ID(), "value": res.Value})
}

// graph shows the graph of a run of a program as the journal records it.
func (s *service) graph(w http.ResponseWriter, r *http.Request) {
	prog, ok := s.programs[r.PathValue("program")]
	if !ok {
		http.Error(w, "no such program", http.StatusNotFound)
		return
	}
	graph, err := s.rt.JournalSnapshot(prog, r.PathValue("run"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(graph)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "where to listen")
	journal := flag.String("journal", "", "a SQLite journal file (default: in memory)")
	flag.Parse()
	s, err := newService(*journal)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	log.Printf("serving on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, s.routes()))
}
