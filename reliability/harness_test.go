package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// fault is what the faulty proxy does to the next matching requests.
type fault int

const (
	faultNone   fault = iota
	faultHTML         // 200 with an HTML page
	faultReset        // close the connection without an answer
	faultCut          // send half of the real body, then close
	faultStatus       // answer status (with Retry-After when set)
)

// faulty sits between the client and the fake portal and injects faults
// into /resource/ requests, recording when each request arrived.
type faulty struct {
	next http.Handler

	mu         sync.Mutex
	mode       fault
	remaining  int // requests still to fault; -1 forever
	status     int
	retryAfter string
	every      int     // with remaining -1: fault every Nth resource request
	rotate     []fault // with every: the faults used in turn
	seen       int
	injected   int
	arrivals   []time.Time
}

func (f *faulty) set(mode fault, n, status int, retryAfter string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode, f.remaining, f.status, f.retryAfter, f.every, f.arrivals = mode, n, status, retryAfter, 0, nil
}

// faultEvery faults every nth resource request from now on, using modes in
// turn (faultStatus answers status).
func (f *faulty) faultEvery(n, status int, modes ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remaining, f.status, f.every, f.rotate, f.seen = -1, status, n, modes, 0
}

func (f *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mode, status, retryAfter := faultNone, 0, ""
	if strings.HasPrefix(r.URL.Path, "/resource/") {
		f.mu.Lock()
		f.arrivals = append(f.arrivals, time.Now())
		f.seen++
		switch {
		case f.remaining > 0:
			f.remaining--
			mode, status, retryAfter = f.mode, f.status, f.retryAfter
		case f.remaining == -1 && f.every > 0 && f.seen%f.every == 0:
			mode, status = f.rotate[f.injected%len(f.rotate)], f.status
			f.injected++
		}
		f.mu.Unlock()
	}
	switch mode {
	case faultNone:
		f.next.ServeHTTP(w, r)
	case faultHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body><h1>Down for maintenance</h1></body></html>"))
	case faultStatus:
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"code":"test.fault","error":true,"message":"injected HTTP %d"}`, status)
	case faultReset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("no hijacker")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST instead of FIN
			}
			conn.Close()
		}
	case faultCut:
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body[:len(body)/2])
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
	}
}

// stack is the product assembled for a test: fake portal behind a faulty
// proxy, client, result server with its REST endpoint, MCP server and an
// in-process MCP client.
type stack struct {
	fake    *socratatest.Server
	gen     string // the generated dataset's ID
	proxy   *faulty
	client  *socrata.Client
	results *dualresp.Server
	store   *dualresp.MemoryStore
	restURL string
	mcp     *client.Client
	logs    *socratatest.LogBuffer
}

type stackOptions struct {
	appToken   string
	maxRetries int
	timeout    time.Duration
	// generated, when not 0, gives the stack a portal whose data is its
	// own, holding a dataset of that many generated rows (stack.gen), and
	// the repository's fixtures too with fixtures. Otherwise the stack's
	// portal serves the fixtures loaded once per test binary
	// (fixtureportal). Either way its controls, request log and logs
	// (stack.logs) are the stack's.
	generated int
	fixtures  bool
}

// genSchema is the generated dataset's schema.
var genSchema = socratatest.Schema{
	ID: "gen0-0001", Name: "Generated rows", Description: "Generated for reliability tests", Category: "Testing",
	Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
		{Name: "Group", FieldName: "grp", DataType: "text"},
	},
}

func genRow(i int) map[string]any {
	return map[string]any{"n": i, "label": fmt.Sprintf("row %d", i), "grp": fmt.Sprintf("g%d", i%7)}
}

// newStack assembles a stack for t (stackOptions), stopped when t ends.
func newStack(t *testing.T, opts stackOptions) *stack {
	t.Helper()
	st := &stack{logs: &socratatest.LogBuffer{}}
	log := slog.New(slog.NewTextHandler(st.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.generated == 0 {
		st.fake = fixtureportal.New(t, socratatest.WithLogger(log))
	} else {
		st.fake = socratatest.NewServer(t, socratatest.WithLogger(log))
		if opts.fixtures {
			if err := fixtureportal.Load(t.Context(), st.fake); err != nil {
				t.Fatal(err)
			}
		}
		st.gen = genSchema.ID
		if err := st.fake.AddGenerated(t.Context(), genSchema, opts.generated, genRow); err != nil {
			t.Fatal(err)
		}
	}
	if opts.appToken != "" {
		st.fake.RequireAppToken(opts.appToken)
	}
	st.proxy = &faulty{next: st.fake.Handler()}
	portal := httptest.NewServer(st.proxy)
	t.Cleanup(portal.Close)
	if opts.timeout == 0 {
		opts.timeout = 10 * time.Second
	}
	env := datasftest.New(t, datasftest.Options{
		PortalURL:  portal.URL,
		ClientName: "reliability",
		Config: datasf.Config{
			Socrata: socrata.Options{
				AppToken: opts.appToken, Timeout: opts.timeout, MaxRetries: opts.maxRetries,
				MaxRetryWait: 5 * time.Second, Logger: log,
			},
			Logger: log,
		},
	})
	st.client = env.Service.SocrataClient()
	st.results = env.Service.Results()
	st.store = st.results.Store().(*dualresp.MemoryStore)
	st.restURL = env.RESTURL()
	st.mcp = env.MCP
	return st
}

// call runs a tool with raw JSON arguments and returns the result and its
// serialized form.
func (st *stack) call(t *testing.T, tool string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := st.mcp.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", tool, args, err)
	}
	b, _ := json.Marshal(res)
	return res, string(b)
}

// toolErr decodes the JSON text of an isError result.
type toolErr struct {
	Error     string         `json:"error"`
	ErrorType string         `json:"error_type"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details"`
}

func errorOf(t *testing.T, res *mcp.CallToolResult) toolErr {
	t.Helper()
	if !res.IsError {
		t.Fatalf("result is not an error: %+v", res.StructuredContent)
	}
	var e toolErr
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		t.Fatalf("error result has no text content: %+v", res.Content)
	}
	if err := json.Unmarshal([]byte(tc.Text), &e); err != nil {
		t.Fatalf("error text %q is not {error, error_type, …}: %v", tc.Text, err)
	}
	if e.Error == "" || e.ErrorType == "" {
		t.Fatalf("error %q lacks error or error_type", tc.Text)
	}
	return e
}

// readResource reads a resource URI through the MCP session.
func (st *stack) readResource(t *testing.T, uri string) (*mcp.ReadResourceResult, error) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	return st.mcp.ReadResource(t.Context(), req)
}
