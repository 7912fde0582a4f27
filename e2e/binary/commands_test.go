//go:build e2e

package binary

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinary runs the built binary with args and returns its stdout, stderr
// and exit code.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary(t), args...)
	cmd.Env = append(os.Environ(), "DATASF_REST_TOKEN=", "DATASF_SERVER=", "DATASF_OFFLINE=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("datasf-mcp %q: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// offlineJSON runs a command against the offline portal (stdout piped, so
// JSON) and decodes its answer into v.
func offlineJSON(t *testing.T, v any, args ...string) (stderr string) {
	t.Helper()
	stdout, stderr, code := runBinary(t, append(args, "--offline", "--log-level", "warn")...)
	if code != 0 {
		t.Fatalf("datasf-mcp %q: exit %d\n%s", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("datasf-mcp %q printed no JSON (%v):\n%s", args, err, stdout)
	}
	return stderr
}

// TestEachCommandAgainstTheOfflinePortal runs every tool command once
// against the offline portal, as a person would from a shell (fetch and
// serve run in TestQueryThroughServerThenFetch).
func TestEachCommandAgainstTheOfflinePortal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	type catalog struct {
		Count      int `json:"count"`
		Categories []struct {
			Name  string `json:"name"`
			Count int    `json:"count"`
		} `json:"categories"`
	}
	t.Run("search", func(t *testing.T) {
		t.Parallel()
		var got catalog
		offlineJSON(t, &got, "search", "police incidents", "--limit", "3")
		if got.Count == 0 {
			t.Errorf("search found nothing")
		}
	})
	t.Run("list", func(t *testing.T) {
		t.Parallel()
		var got catalog
		offlineJSON(t, &got, "list", "--category", "Public Safety")
		if got.Count == 0 {
			t.Errorf("list --category \"Public Safety\" found nothing")
		}
		var none catalog
		offlineJSON(t, &none, "list", "--category", "No Such Category")
		if none.Count != 0 || len(none.Categories) == 0 {
			t.Errorf("list of a category without datasets = %+v; want the categories that exist", none)
		}
	})
	t.Run("schema", func(t *testing.T) {
		t.Parallel()
		var got struct {
			RowCount int `json:"row_count"`
			Columns  []any
		}
		offlineJSON(t, &got, "schema", "rqzj-sfat")
		if got.RowCount == 0 || len(got.Columns) == 0 {
			t.Errorf("schema = %+v", got)
		}
	})
	t.Run("query", func(t *testing.T) {
		t.Parallel()
		var got struct {
			Results  []any `json:"results"`
			Metadata struct {
				TotalCount int `json:"total_count"`
			} `json:"metadata"`
		}
		stderr := offlineJSON(t, &got, "query", "rqzj-sfat", "SELECT applicant, status WHERE status = 'APPROVED'", "--sample-size", "4")
		if len(got.Results) != 4 || got.Metadata.TotalCount <= 4 {
			t.Errorf("query = %d sample rows of %d; want 4 of more", len(got.Results), got.Metadata.TotalCount)
		}
		if !strings.Contains(stderr, "ended with it") {
			t.Errorf("query without --server does not say its link ended with it; stderr:\n%s", stderr)
		}
		md, _, code := runBinary(t, "query", "rqzj-sfat", "SELECT applicant, status", "--offline", "--log-level", "warn", "--format", "markdown")
		if code != 0 || !strings.Contains(md, "| applicant | status |") || !strings.Contains(md, "ended with it") {
			t.Errorf("query --format markdown: exit %d:\n%s", code, md)
		}
	})
	t.Run("results", func(t *testing.T) {
		t.Parallel()
		var got struct {
			Summary string `json:"summary"`
			Results []any  `json:"results"`
		}
		offlineJSON(t, &got, "results")
		if got.Summary == "" || got.Results == nil {
			t.Errorf("results = %+v", got)
		}
	})
	t.Run("analyze", func(t *testing.T) {
		t.Parallel()
		var got struct {
			RowCount int              `json:"row_count"`
			Rows     []map[string]any `json:"rows"`
		}
		offlineJSON(t, &got, "analyze", "SELECT status, count(*) AS n FROM trucks GROUP BY status ORDER BY n DESC",
			"--query", "trucks=rqzj-sfat:SELECT applicant, status")
		if got.RowCount == 0 || got.Rows[0]["n"] == nil {
			t.Errorf("analyze = %+v", got)
		}
	})
	t.Run("version", func(t *testing.T) {
		t.Parallel()
		out, _, code := runBinary(t, "version")
		if code != 0 || !strings.HasPrefix(out, "datasf-mcp ") || !strings.Contains(out, "commit") {
			t.Errorf("version: exit %d, %q", code, out)
		}
	})
}

// TestQueryAllWritesTheCompleteResult: query --all -o FILE writes every row
// in the same process (no server), as many as total_count.
func TestQueryAllWritesTheCompleteResult(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	dir := t.TempDir()
	const soql = "SELECT incident_category, police_district WHERE police_district = 'Mission'"
	csvPath := filepath.Join(dir, "mission.csv")
	var answer struct {
		Metadata struct {
			TotalCount int `json:"total_count"`
		} `json:"metadata"`
		LinkNote string `json:"link_note"`
	}
	stderr := offlineJSON(t, &answer, "query", "wg3w-h783", soql, "--all", "-o", csvPath)
	lines := countLines(t, csvPath)
	// The JSON answer says, as the markdown does, that its link is dead.
	if !strings.Contains(answer.LinkNote, "ended with it") || !strings.Contains(answer.LinkNote, csvPath) {
		t.Errorf("query --all JSON link_note = %q; want the note that the link ended with the command, naming %s", answer.LinkNote, csvPath)
	}
	if answer.Metadata.TotalCount < 1000 || lines-1 != answer.Metadata.TotalCount {
		t.Errorf("query --all -o %s: %d CSV rows; total_count %d", csvPath, lines-1, answer.Metadata.TotalCount)
	}
	if !strings.Contains(stderr, "rows (csv") {
		t.Errorf("query --all reported nothing on stderr:\n%s", stderr)
	}

	// To stdout, as NDJSON: only the rows.
	ndjson, stderr, code := runBinary(t, "query", "rqzj-sfat", "SELECT applicant, status", "--offline", "--log-level", "warn", "--all", "--format", "ndjson")
	var schema struct {
		RowCount int `json:"row_count"`
	}
	offlineJSON(t, &schema, "schema", "rqzj-sfat")
	if n := strings.Count(ndjson, "\n"); code != 0 || n != schema.RowCount {
		t.Errorf("query --all --format ndjson: exit %d, %d lines; want row_count %d\n%s", code, n, schema.RowCount, stderr)
	}
	t.Logf("query --all: %d CSV rows = total_count %d; %d NDJSON lines on stdout = row_count %d",
		lines-1, answer.Metadata.TotalCount, strings.Count(ndjson, "\n"), schema.RowCount)
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCommandLineMistakes: a person's mistakes on the command line end with exit status 2,
// the error and the command's usage on stderr, nothing on stdout and no
// sign of loading (no log line).
func TestCommandLineMistakes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--categry", "Public Safety", "--offline"}, "unknown flag: --categry"},
		{[]string{"serve", "--http", "8081x", "--offline"}, "--http: want PORT, :PORT or HOST:PORT"},
		{[]string{"serve", "--http", "8081", "--expiration", "5", "--offline"}, "--expiration must be a positive duration"},
		{[]string{"query", "wg3w-h783", "SELECT 1", "--format", "csv", "--offline"}, "add --all"},
		{[]string{"search", "trees", "--limit", "21", "--offline"}, "--limit must be between 1 and 20"},
		{[]string{"query", "wg3w-h783", "--offline"}, "query needs SOQL"},
		{[]string{"help", "nosuch"}, `unknown command "nosuch"`},
		{[]string{"nosuch"}, `unknown command "nosuch"`},
	} {
		stdout, stderr, code := runBinary(t, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "Usage:\n  datasf-mcp") {
			t.Errorf("datasf-mcp %q: exit %d, stdout %q, stderr:\n%s\nwant exit 2, %q and the usage on stderr", tc.args, code, stdout, stderr, tc.want)
		}
		if strings.Contains(stderr, "level=") {
			t.Errorf("datasf-mcp %q logged before reporting the mistake:\n%s", tc.args, stderr)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"query", "--help"}, {"help", "query"}, {"version"}} {
		stdout, stderr, code := runBinary(t, args...)
		if code != 0 || stdout == "" {
			t.Errorf("datasf-mcp %q: exit %d, stdout %q, stderr %q; want exit 0 and output on stdout", args, code, stdout, stderr)
		}
	}
}

// TestUnreachablePortalSuggestsOffline: when the portal cannot be reached
// (here a loopback port where nothing listens, as a machine without network
// fails), the command says so and suggests --offline and --data, and the
// app token is not printed.
func TestUnreachablePortalSuggestsOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	closed := "http://" + freeAddr(t)
	const token = "app-token-never-printed-5e1f"
	for _, args := range [][]string{
		{"schema", "wg3w-h783"},
		{"search", "trees"},
		{"query", "wg3w-h783", "SELECT 1"},
	} {
		stdout, msg, err := runEnv(t, []string{"SOCRATA_APP_TOKEN=" + token}, append(args, "--base-url", closed, "--discovery-url", closed, "--log-level", "warn")...)
		if err == nil || stdout != "" {
			t.Errorf("datasf-mcp %q against a closed port: %v, stdout %q; want a failure", args, err, stdout)
		}
		for _, want := range []string{"Could not reach the portal", strings.TrimPrefix(closed, "http://"), "--offline", "--data"} {
			if !strings.Contains(msg, want) {
				t.Errorf("datasf-mcp %q against a closed port: stderr lacks %q:\n%s", args, want, msg)
			}
		}
		if strings.Contains(msg, token) {
			t.Errorf("datasf-mcp %q printed the app token:\n%s", args, msg)
		}
	}
}
