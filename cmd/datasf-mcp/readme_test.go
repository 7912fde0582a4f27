package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
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

func TestREADMEQueryExampleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	for _, args := range readmeCommands(t) {
		// The --server example needs a running server: TestQueryThroughServerThenFetch
		// runs that path. This one runs the self-contained --offline example.
		if len(args) == 0 || args[0] != "query" || !slices.Contains(args, "--offline") {
			continue
		}
		cmd := exec.Command(binary(t), append(args, "--log-level", "warn")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("README example %q: %v\n%s", args, err, stderr.String())
		}
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
		return
	}
	t.Fatal("the README has no query example")
}
