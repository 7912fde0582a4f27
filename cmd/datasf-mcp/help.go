package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpWidth is the width help text is wrapped to.
const helpWidth = 100

// helpText is a command's --help and `help CMD`: what it does, its
// synopsis, its flags by group and an example.
func helpText(cmd *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", cmd.CommandPath(), cmd.Short)
	b.WriteString(synopsis(cmd))
	if cmd.Long != "" {
		b.WriteString("\n" + wrap(cmd.Long, helpWidth) + "\n")
	}
	if !cmd.HasParent() {
		b.WriteString("\nCommands:\n")
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				fmt.Fprintf(&b, "  %-11s %s\n", c.Name(), c.Short)
			}
		}
	}
	b.WriteString(flagText(cmd, flagGroupOrder...))
	if !cmd.HasParent() {
		b.WriteString(`
Environment only:
  SOCRATA_APP_TOKEN   Socrata app token, sent as X-App-Token (never printed or logged)
  DATASF_APP_TOKENS   app tokens of other portals, DOMAIN=TOKEN,…; each is sent only to its domain
  DATASF_REST_TOKEN   comma-separated bearer tokens; when set, /resources/ and /mcp require
                      "Authorization: Bearer TOKEN" and each result is visible only to the
                      token that created it; fetch and --server send the first one
  DATASF_METRICS_TOKEN  comma-separated operator tokens for /metrics; with DATASF_REST_TOKEN
                      and without it, /metrics is closed
`)
	}
	if cmd.Example != "" {
		b.WriteString("\nExample:\n" + indent(cmd.Example) + "\n")
	}
	if !cmd.HasParent() {
		b.WriteString("\nRun 'datasf-mcp help COMMAND' (or 'datasf-mcp COMMAND --help') for a command's flags and an example.\n")
	}
	return b.String()
}

// usageText is what a command-line mistake prints after the error: the
// synopsis and the flags.
func usageText(cmd *cobra.Command) string {
	var b strings.Builder
	b.WriteString(synopsis(cmd))
	b.WriteString(flagText(cmd, groupArguments, groupOutput, groupServer))
	fmt.Fprintf(&b, "\nRun 'datasf-mcp help%s' for all flags and an example.\n", strings.TrimPrefix(cmd.CommandPath(), "datasf-mcp"))
	return b.String()
}

func synopsis(cmd *cobra.Command) string {
	line := strings.Replace(cmd.UseLine(), " [flags]", "", 1)
	if !cmd.HasParent() {
		return "Usage:\n  datasf-mcp [flags]                MCP over stdio\n  datasf-mcp COMMAND [ARGS] [flags]\n"
	}
	if flagText(cmd, flagGroupOrder...) != "" {
		line += " [flags]"
	}
	s := "Usage:\n  " + line + "\n"
	if len(cmd.Aliases) > 0 {
		s += "  (also: datasf-mcp " + strings.Join(cmd.Aliases, ", ") + ")\n"
	}
	return s
}

// flagGroupOrder is the order of the flag headings in help.
var flagGroupOrder = []string{groupArguments, groupOutput, groupServer, groupPortal, ""}

// flagText lists cmd's flags of the groups named, under their headings.
func flagText(cmd *cobra.Command, groups ...string) string {
	var all []*pflag.Flag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" { // -h/--help exists everywhere, added lazily
			all = append(all, f)
		}
	})
	slices.SortStableFunc(all, func(a, b *pflag.Flag) int {
		return strings.Compare(strings.Join(a.Annotations[orderKey], ""), strings.Join(b.Annotations[orderKey], ""))
	})
	sets := map[string]*pflag.FlagSet{}
	for _, f := range all {
		g := ""
		if v := f.Annotations[groupKey]; len(v) > 0 {
			g = v[0]
		}
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = false
		}
		sets[g].AddFlag(f)
	}
	titles := map[string]string{
		groupArguments: "Flags (the tool's arguments)",
		groupOutput:    "Output flags",
		groupServer:    "Server flags",
		groupPortal:    "Portal flags",
		"":             "Other flags",
	}
	if len(sets) == 1 {
		titles[""] = "Flags"
	}
	var b strings.Builder
	for _, g := range groups {
		if fs := sets[g]; fs != nil {
			fmt.Fprintf(&b, "\n%s:\n%s", titles[g], fs.FlagUsagesWrapped(helpWidth))
		}
	}
	return b.String()
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

// wrap breaks long lines of s at spaces to at most width characters;
// lines already shorter, and their breaks, stay.
func wrap(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for len(line) > width {
			i := strings.LastIndex(line[:width], " ")
			if i <= 0 {
				break
			}
			out = append(out, line[:i])
			line = line[i+1:]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
