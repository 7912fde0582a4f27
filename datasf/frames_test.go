package datasf

import (
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// maxQueryFrames is how many of our functions may stand between
// query_datasf's tool handler and http.Client.Do (docs/architecture.md
// lists them).
const maxQueryFrames = 6

// stackRecorder is a RoundTripper that keeps the goroutine's stack (with
// the stacks of the goroutines that started it, under
// GODEBUG=tracebackancestors) of the first request whose stack has want.
type stackRecorder struct {
	want string
	mu   sync.Mutex
	got  string
}

func (s *stackRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	buf := make([]byte, 1<<16)
	stack := string(buf[:runtime.Stack(buf, false)])
	s.mu.Lock()
	if s.got == "" && strings.Contains(stack, s.want) {
		s.got = stack
	}
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// ourFrames returns the functions of this module in stack (outermost
// first) from the MCP tool handler down to http.Client.Do: the frames of
// the goroutine that ran the request follow those of the goroutines that
// started it, up to where each started the next.
func ourFrames(stack string) []string {
	// runtime.Stack lists a goroutine innermost first, then each ancestor
	// after "[originating from goroutine N]:".
	var segments [][]string
	var cur []string
	for _, line := range strings.Split(stack, "\n") {
		switch {
		case strings.HasPrefix(line, "goroutine "), line == "", strings.HasPrefix(line, "\t"), strings.HasPrefix(line, "created by "):
		case strings.HasPrefix(line, "[originating from goroutine"):
			segments = append(segments, cur)
			cur = nil
		default:
			cur = append(cur, line[:strings.LastIndexByte(line, '(')])
		}
	}
	segments = append(segments, cur)
	var out []string
	for i := len(segments) - 1; i >= 0; i-- { // outermost goroutine first
		seg := segments[i]
		for j := len(seg) - 1; j >= 0; j-- {
			fn := seg[j]
			if fn == "net/http.(*Client).Do" {
				return out
			}
			if strings.HasPrefix(fn, "github.com/datasf-mcp/datasf-mcp/") && !strings.Contains(fn, "_test.") && !strings.Contains(fn, "Test") {
				out = append(out, strings.TrimPrefix(fn, "github.com/datasf-mcp/datasf-mcp/"))
			}
		}
	}
	return out
}

// query_datasf's sample request passes through at most maxQueryFrames of
// our functions from the tool's MCP handler to http.Client.Do. The test runs
// itself again with GODEBUG=tracebackancestors so that the stack reaches
// across the goroutine that runs the sample beside the count.
func TestQueryPathFrames(t *testing.T) {
	if os.Getenv("DATASF_FRAMES_CHILD") == "" {
		t.Parallel()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestQueryPathFrames$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "DATASF_FRAMES_CHILD=1", "GODEBUG=tracebackancestors=10")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the test run with GODEBUG=tracebackancestors failed: %v\n%s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "frames:") {
				t.Log(strings.TrimSpace(line))
			}
		}
		return
	}
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "abcd-1234", Name: "Frames", Columns: []socratatest.Column{{Name: "N", FieldName: "n", DataType: "number"}}}
	if err := fake.AddGenerated(t.Context(), schema, 20, func(i int) map[string]any { return map[string]any{"n": i} }); err != nil {
		t.Fatal(err)
	}
	rec := &stackRecorder{want: "Page"}
	svc, err := New(t.Context(), Config{CleanupInterval: -1, Socrata: socrata.Options{BaseURL: fake.URL(), DiscoveryURL: fake.URL(), MaxRetries: -1,
		HTTPClient: &http.Client{Transport: rec}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = map[string]any{"dataset_id": "abcd-1234", "soql": "SELECT n WHERE n > 3"}
	res, err := queryTool(svc.server).handler(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("query_datasf = %v, %v", res.Content, err)
	}
	// The MCP handler newTool makes (decode, call, render) stands above
	// the tool's typed handler; the frames are counted from the typed
	// handler, as from any tool handler.
	all := ourFrames(rec.got)
	handler := slices.Index(all, "datasf.(*toolServer).query")
	if handler < 0 {
		t.Fatalf("the sample's stack does not reach the tool handler (is GODEBUG=tracebackancestors set?):\n%s", rec.got)
	}
	if above := all[:handler]; len(above) != 1 || !strings.HasPrefix(above[0], "datasf.newTool[") {
		t.Errorf("above the tool handler: %q; want only newTool's MCP handler", above)
	}
	frames := all[handler:]
	t.Logf("frames: %d: %s (below %s)", len(frames), strings.Join(frames, " → "), strings.Join(all[:handler], " → "))
	if len(frames) > maxQueryFrames {
		t.Errorf("query_datasf's sample passes through %d of our functions to http.Client.Do; want at most %d:\n%s",
			len(frames), maxQueryFrames, strings.Join(frames, "\n"))
	}
}
