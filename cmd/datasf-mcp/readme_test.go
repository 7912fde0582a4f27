package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// readmeCommands returns the datasf-mcp command lines of the README's sh
// blocks, as argument lists (after the program name).
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllSubmatch(readme, -1) {
		for _, line := range strings.Split(string(block[1]), "\n") {
			line, _, _ = strings.Cut(line, " #")
			words := shellWords(line)
			switch {
			case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/datasf-mcp":
				cmds = append(cmds, words[3:])
			case len(words) >= 1 && words[0] == "datasf-mcp":
				cmds = append(cmds, words[1:])
			}
		}
	}
	return cmds
}

// shellWords splits a command line on spaces, honouring double quotes.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote, inWord = !inQuote, true
		case r == ' ' && !inQuote:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func TestREADMECommandsParse(t *testing.T) {
	t.Parallel()
	cmds := readmeCommands(t)
	if len(cmds) < 4 {
		t.Fatalf("found %d datasf-mcp commands in the README; want at least 4", len(cmds))
	}
	for _, args := range cmds {
		var stderr bytes.Buffer
		if _, err := parseConfig(args, func(string) string { return "" }, &stderr); err != nil {
			t.Errorf("README command datasf-mcp %q does not parse: %v", args, err)
		}
	}
}

// TestREADMECommandsRun runs every self-contained README command (those
// with --offline, and version) in a temporary directory; the ones that
// need a running server are the path of TestQueryThroughServerThenFetch.
// The query example's promises are checked.
func TestREADMECommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
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
	cmd := exec.Command(binary(t), append(args, "--log-level", "warn")...)
	if args[0] == "version" {
		cmd = exec.Command(binary(t), args...)
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

// TestREADMEInstallNamesRegistryAndLicense: the README's Install section
// names the MCP Registry entry and the license, and both files exist.
func TestREADMEInstallNamesRegistryAndLicense(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, install, _ := strings.Cut(string(readme), "\n## Install\n")
	install, _, _ = strings.Cut(install, "\n## ")
	for _, want := range []string{"server.json", "MCP Registry", "LICENSE", "MIT"} {
		if !strings.Contains(install, want) {
			t.Errorf("README's Install section does not name %q", want)
		}
	}
	for _, f := range []string{"../../server.json", "../../LICENSE"} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}
