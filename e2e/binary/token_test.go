//go:build e2e

package binary

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// startTokenInstance starts `serve --http --offline` with DATASF_REST_TOKEN
// set to tokens and debug logs, and waits until it is healthy.
func startTokenInstance(t *testing.T, tokens string) *instance {
	t.Helper()
	return startInstanceEnv(t, []string{"DATASF_REST_TOKEN=" + tokens}, "--log-level", "debug")
}

// runCLI runs the binary with DATASF_REST_TOKEN=token ("" for unset).
func runCLI(t *testing.T, token string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runEnv(t, []string{"DATASF_REST_TOKEN=" + token}, args...)
}

// runEnv runs the binary with env added to the environment.
func runEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	// Like runBinary: nothing of the caller's environment decides the test.
	cmd.Env = append(append(os.Environ(), "DATASF_REST_TOKEN=", "DATASF_SERVER=", "DATASF_OFFLINE="), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// Token mode end to end: serve with DATASF_REST_TOKEN, query --server and
// fetch with the token from the environment, and the viewer page opened
// with the token in the URL fragment in headless Chromium.
func TestTokenModeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	const alice, bob = "tok-alice-3f9a1c", "tok-bob-77d2e0"
	inst := startTokenInstance(t, alice+","+bob)

	// query --server: the first token of the environment identifies the caller.
	if _, stderr, err := runCLI(t, "", "query", "rqzj-sfat", "SELECT applicant", "--server", inst.base); err == nil || !strings.Contains(stderr, "401") {
		t.Errorf("query --server without a token = %v; want a failure naming HTTP 401\n%s", err, stderr)
	}
	out, stderr, err := runCLI(t, alice, "query", "rqzj-sfat", "SELECT applicant, status WHERE status = 'APPROVED'", "--server", inst.base, "--sample-size", "5")
	if err != nil {
		t.Fatalf("query --server with DATASF_REST_TOKEN: %v\n%s", err, stderr)
	}
	var sc struct {
		Resource struct{ URL string } `json:"resource"`
		Metadata struct {
			TotalCount int `json:"total_count"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(out), &sc); err != nil || sc.Resource.URL == "" {
		t.Fatalf("query --server printed %s (%v)", out, err)
	}

	// fetch: 401 without a token, 404 with another owner's, the rows with alice's.
	csvPath := filepath.Join(t.TempDir(), "approved.csv")
	if _, stderr, err := runCLI(t, "", "fetch", sc.Resource.URL, "-o", csvPath); err == nil || !strings.Contains(stderr, "DATASF_REST_TOKEN") {
		t.Errorf("fetch without a token: %v, %q; want an error that names DATASF_REST_TOKEN", err, stderr)
	}
	if _, stderr, err := runCLI(t, bob, "fetch", sc.Resource.URL, "-o", csvPath); err == nil || !strings.Contains(stderr, "404") {
		t.Errorf("fetch with another owner's token: %v, %q; want 404", err, stderr)
	}
	if _, stderr, err := runCLI(t, alice, "fetch", sc.Resource.URL, "--format", "csv", "-o", csvPath); err != nil {
		t.Fatalf("fetch with DATASF_REST_TOKEN: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if lines[0] != "applicant,status" || len(lines)-1 != sc.Metadata.TotalCount {
		t.Errorf("fetched CSV has header %q and %d rows; want applicant,status and total_count %d", lines[0], len(lines)-1, sc.Metadata.TotalCount)
	}

	// The viewer in headless Chromium, with the token in the fragment.
	node, chromium, script := browserTools(t)
	cmd := exec.CommandContext(t.Context(), node, script, sc.Resource.URL, alice)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	var nodeErr bytes.Buffer
	cmd.Stderr = &nodeErr
	vout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node token_viewer.mjs: %v\nstdout: %s\nstderr: %s", err, vout, nodeErr.String())
	}
	var fig struct {
		Total    int `json:"total"`
		Shown    int `json:"shown"`
		CSVRows  int `json:"csv_rows"`
		Authed   int `json:"authorized_requests"`
		Requests int `json:"requests"`
	}
	if err := json.Unmarshal(vout, &fig); err != nil {
		t.Fatalf("token_viewer output %q: %v", vout, err)
	}
	if fig.Total != sc.Metadata.TotalCount || fig.CSVRows != sc.Metadata.TotalCount || fig.Shown != min(100, fig.Total) {
		t.Errorf("viewer figures %+v; want total and CSV rows %d", fig, sc.Metadata.TotalCount)
	}
	inst.kill() // its stderr is complete, and no longer written
	if strings.Contains(inst.stderr.String(), alice) {
		t.Errorf("the server logged the token:\n%s", inst.stderr)
	}
	t.Logf("token mode: query --server → %s (%d rows); fetch → %d CSV rows; viewer → %d rows shown of %d, CSV download %d rows, %d of %d browser requests with the bearer header",
		sc.Resource.URL, sc.Metadata.TotalCount, len(lines)-1, fig.Shown, fig.Total, fig.CSVRows, fig.Authed, fig.Requests)
}

// browserTools returns node, chromium and the token viewer script, or
// skips the test (fails it in CI) when one is missing.
func browserTools(t *testing.T) (node, chromium, script string) {
	t.Helper()
	return harness.Node(t, "playwright-core"), harness.Chromium(t), harness.Path("interop/token_viewer.mjs")
}
