//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// TestREADMECommandsRun runs every self-contained README command (those
// with --offline, and version) in a temporary directory; the ones that
// need a running server are the path of TestQueryThroughServerThenFetch.
// The query example's promises are checked.
func TestREADMECommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	// The README's queries of wg3w-h783 find it built, as in e2e/binary.
	if err := harness.WarmIncidents(); err != nil {
		t.Fatal(err)
	}
	var promised atomic.Int32
	t.Cleanup(func() {
		if !t.Failed() && promised.Load() == 0 {
			t.Error("the README has no query example with --sample-size")
		}
	})
	for _, args := range readmeCommands(t) {
		if len(args) == 0 || args[0] == "serve" || args[0] == "fetch" || slices.Contains(args, "--server") ||
			!slices.Contains(args, "--offline") && args[0] != "version" {
			continue
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			runREADMECommand(t, args, &promised)
		})
	}
}

// runREADMECommand runs one README command; a query with --sample-size is
// the example whose promises the README states.
func runREADMECommand(t *testing.T, args []string, promised *atomic.Int32) {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), append(args, "--log-level", "warn")...)
	if args[0] == "version" {
		cmd = exec.Command(harness.Binary(t), args...)
	}
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("README command datasf-mcp %q: %v\n%s", args, err, stderr.String())
	}
	if args[0] != "query" || !slices.Contains(args, "--sample-size") {
		return
	}
	promised.Add(1)
	var sc struct {
		Results  []map[string]any `json:"results"`
		Metadata struct {
			TotalCount  int `json:"total_count"`
			Corrections []struct {
				Original, Corrected string
			} `json:"corrections"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(out, &sc); err != nil {
		t.Fatalf("README example output is not the dual response: %v\n%s", err, out)
	}
	if sc.Metadata.TotalCount == 0 || len(sc.Results) != 3 || len(sc.Metadata.Corrections) != 1 ||
		sc.Metadata.Corrections[0].Corrected != "incident_category" {
		t.Errorf("README example gave total %d, %d rows, corrections %+v; the README promises 3 rows and incident_categry corrected",
			sc.Metadata.TotalCount, len(sc.Results), sc.Metadata.Corrections)
	}
}
