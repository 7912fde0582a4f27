//go:build e2e

package binary

import (
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// The command line's words, through the built binary: a mistyped command
// gets the command meant; one dataset "matches", not "match"; analyze
// with a result reference that is no result names it, and the hint is
// about the reference, not the SQL.
func TestCommandLineWords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	for _, args := range [][]string{{"serch", "police"}, {"help", "serch"}, {"qeury", "wg3w-h783", "SELECT 1"}} {
		_, stderr, code := runBinary(t, args...)
		meant := map[string]string{"serch": "search", "qeury": "query"}[strings.TrimPrefix(args[0], "help ")]
		if args[0] == "help" {
			meant = "search"
		}
		if code != 2 || !strings.Contains(stderr, "did you mean "+meant+"?") {
			t.Errorf("datasf-mcp %q: exit %d, stderr %q; want exit 2 and \"did you mean %s?\"", args, code, firstLine(stderr), meant)
		}
	}
	if _, stderr, _ := runBinary(t, "frobnicate"); strings.Contains(stderr, "did you mean") {
		t.Errorf("datasf-mcp frobnicate: %q; want no guess for a word far from every command", firstLine(stderr))
	}

	var one struct {
		Summary string `json:"summary"`
		Count   int    `json:"count"`
	}
	offlineJSON(t, &one, "search", "police", "--limit", "1")
	if one.Count != 1 || !strings.HasPrefix(one.Summary, `1 dataset matches "police"`) {
		t.Errorf("search police --limit 1: count %d, summary %q; want 1 and \"1 dataset matches\"", one.Count, one.Summary)
	}
	var none struct {
		Summary string `json:"summary"`
	}
	offlineJSON(t, &none, "search", "qqxzq vwkjj")
	if !strings.HasPrefix(none.Summary, `No dataset matches "qqxzq vwkjj".`) {
		t.Errorf("search with no hit: summary %q; want \"No dataset matches\"", none.Summary)
	}

	_, stderr, code := runBinary(t, "analyze", "SELECT * FROM t", "--results", "t=unknown", "--offline", "--log-level", "warn")
	if code != 1 || !strings.Contains(stderr, `table t names "unknown", which is no stored result`) ||
		strings.Contains(stderr, "fix the SQL") || !strings.Contains(stderr, "hint: `datasf-mcp results`") {
		t.Errorf("analyze --results t=unknown: exit %d, stderr:\n%s\nwant exit 1 naming \"unknown\" and a hint about results, not the SQL", code, stderr)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// doctor with a portal it cannot reach: every check is FAIL or skip, none
// ok (no "ok limits … no throttling in 11 requests" for requests that
// reached nothing), with and without a token.
func TestDoctorUnreachableIsNeverOK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	down := socratatest.NewServer(t)
	url := down.URL()
	down.Close()
	for _, env := range [][]string{nil, {"SOCRATA_APP_TOKEN=a-token"}} {
		out, code := doctorRunEnv(t, env, url, "--domain", socrata.DefaultDomain)
		if code == 0 {
			t.Errorf("doctor of a portal that is down (env %q): exit 0\n%s", env, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) < 2 || (f[0] != "FAIL" && f[0] != "skip") {
				t.Errorf("doctor of a portal that is down (env %q): %q; want every check FAIL or skip\n%s", env, line, out)
			}
		}
		if !strings.Contains(out, "skip  limits") || !strings.Contains(out, "the portal answered none of") {
			t.Errorf("doctor of a portal that is down (env %q): want the limits check skipped, saying no request was answered\n%s", env, out)
		}
	}
}
