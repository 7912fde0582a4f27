package main

import (
	"bytes"
	"os"
	"regexp"
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
