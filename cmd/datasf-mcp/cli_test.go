package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// commandNamesForTest are every command of the command line.
var commandNamesForTest = []string{"search", "list", "schema", "query", "results", "analyze", "fetch", "serve", "version", "help"}

// TestEveryCommandHasItsOwnHelp: `CMD --help` and `help CMD` print the
// same text: the command's synopsis, its flags (each argument of its tool)
// and an example; and no two commands share one help.
func TestEveryCommandHasItsOwnHelp(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, name := range commandNamesForTest {
		var viaFlag, viaHelp bytes.Buffer
		if _, err := parseConfig([]string{name, "--help"}, func(string) string { return "" }, &viaFlag); !errors.Is(err, errHelp) {
			t.Errorf("parseConfig(%s --help) = %v; want errHelp", name, err)
		}
		if _, err := parseConfig([]string{"help", name}, func(string) string { return "" }, &viaHelp); !errors.Is(err, errHelp) {
			t.Errorf("parseConfig(help %s) = %v; want errHelp", name, err)
		}
		help := viaFlag.String()
		if help != viaHelp.String() {
			t.Errorf("%s --help and help %s differ:\n%s\n----\n%s", name, name, help, viaHelp.String())
		}
		for _, want := range []string{"Usage:\n  datasf-mcp " + name, "\nExample:\n  datasf-mcp "} {
			if !strings.Contains(help, want) {
				t.Errorf("help %s lacks %q:\n%s", name, want, help)
			}
		}
		if other, ok := seen[help]; ok {
			t.Errorf("help %s is the same as help %s", name, other)
		}
		seen[help] = name
		if strings.Contains(help, "`") {
			t.Errorf("help %s shows a back quote (a flag's argument name gone wrong):\n%s", name, help)
		}
	}
	for _, tc := range commands {
		if tc.tool == "" {
			continue
		}
		var out bytes.Buffer
		_, _ = parseConfig([]string{"help", tc.name}, func(string) string { return "" }, &out)
		for _, a := range toolSpec(tc.tool).Args {
			if a.Name == "format" {
				continue
			}
			if !strings.Contains(out.String(), "--"+flagName(a.Name)+" ") {
				t.Errorf("help %s lacks the flag of %s's argument %s", tc.name, tc.tool, a.Name)
			}
		}
		if !strings.Contains(out.String(), tc.tool) {
			t.Errorf("help %s does not name its tool %s", tc.name, tc.tool)
		}
	}
	var root bytes.Buffer
	if _, err := parseConfig([]string{"help"}, func(string) string { return "" }, &root); !errors.Is(err, errHelp) {
		t.Fatalf("parseConfig(help) = %v; want errHelp", err)
	}
	for _, name := range commandNamesForTest {
		if !strings.Contains(root.String(), "\n  "+name+" ") {
			t.Errorf("datasf-mcp help does not list %s:\n%s", name, root.String())
		}
	}
}

// TestEveryToolHasACommand: each tool a model can call can be called from
// the shell.
func TestEveryToolHasACommand(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, tc := range commands {
		have[tc.tool] = true
	}
	for _, s := range datasf.ToolSpecs() {
		if !have[s.Name] {
			t.Errorf("tool %s has no command", s.Name)
		}
	}
}

// TestCompletionScripts: cobra's completion command writes a script for
// each shell.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out bytes.Buffer
		if _, err := parseConfig([]string{"completion", shell}, func(string) string { return "" }, &out); !errors.Is(err, errHelp) {
			t.Errorf("completion %s: %v", shell, err)
		}
		if !strings.Contains(out.String(), "datasf-mcp") {
			t.Errorf("completion %s wrote no script for datasf-mcp: %.200s", shell, out.String())
		}
	}
}

// TestHelpSpeaksToAPerson: every flag of every command has a description
// that starts with words (not only limits), and no command's help tells
// the reader what a model should do (the tools' descriptions are written
// for a model; the command line has its own words).
func TestHelpSpeaksToAPerson(t *testing.T) {
	t.Parallel()
	root, _ := commandTree(func(string) string { return "" })
	cmds := append([]*cobra.Command{root}, root.Commands()...)
	for _, cmd := range cmds {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if u := strings.TrimSpace(f.Usage); u == "" || strings.HasPrefix(u, "(") {
				t.Errorf("%s --%s: help %q; want words that say what the flag does", cmd.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, modelWords := range []string{"Next: ", "Call it before", "never page through", "the user", "Runs the tool"} {
			if strings.Contains(cmd.Long, modelWords) {
				t.Errorf("%s's help says %q, words for a model:\n%s", cmd.CommandPath(), modelWords, cmd.Long)
			}
		}
	}
}
