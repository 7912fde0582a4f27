//go:build e2e

package binary

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The README's offline example of another portal: a file placed on
// data.cityofchicago.org with --data DOMAIN=ID=FILE, queried with --domain.
func TestQueryOtherDomainOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "chicago-311.csv")
	if err := os.WriteFile(file, []byte("status,ward\nOpen,1\nClosed,2\nOpen,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "query", "v6vf-nfxy", "SELECT status, count(*) AS n GROUP BY status ORDER BY status",
		"--domain", "data.cityofchicago.org", "--offline", "--no-cache", "--log-level", "warn", "--json",
		"--data", "data.cityofchicago.org=v6vf-nfxy="+file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("datasf-mcp query --domain: %v\n%s", err, stderr.String())
	}
	var sc struct {
		Results  []map[string]any `json:"results"`
		Metadata struct {
			Domain     string `json:"domain"`
			TotalCount int    `json:"total_count"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(out, &sc); err != nil {
		t.Fatalf("output is not the dual response: %v\n%s", err, out)
	}
	if sc.Metadata.Domain != "data.cityofchicago.org" || sc.Metadata.TotalCount != 2 || len(sc.Results) != 2 || sc.Results[1]["n"] != "2" {
		t.Errorf("query on data.cityofchicago.org offline = domain %q, total %d, rows %v; want the file's 2 groups (Open: 2)",
			sc.Metadata.Domain, sc.Metadata.TotalCount, sc.Results)
	}
}
