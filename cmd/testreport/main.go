// Command testreport runs `go test -json` with the arguments it is given and
// prints what plain `go test` prints (each package's ok/FAIL line, and the
// output of the tests that failed), then a summary: every skipped test with
// the reason it gave, and the packages that took longest.
//
// A "--" argument separates the arguments of several go test runs, made at
// the same time (make test: the fast tier with the race detector, and the
// e2e tier, -tags e2e, without it; the second fills the first's idle time,
// when its tests wait on timeouts and child processes).
//
// The summary counts the tests that ran, top-level tests and subtests, each
// once however many runs ran it: the figure to compare when tests move
// between tiers.
//
// A run's "-tagged-only TAG" (testreport's, not go test's) runs only the
// tests declared in files built with that tag and not without it: the
// e2e tier's packages beside their fast tests (a *_e2e_test.go file in
// datasf, say) would otherwise run those fast tests a second time,
// without the race detector, for nothing. The names come from the files,
// found from the current directory down: no test is named by hand.
//
// TESTREPORT_JSON=FILE also writes the raw events to FILE (for timings).
//
// Its exit code is go test's (the first run's that failed). With CI=true a
// skipped test is a failure too: CI installs everything the tests need, so
// nothing may skip there.
//
// It names the modules (go list -m: those of go.work) of which no package
// was tested, and with CI=true fails for them too: a relative pattern such
// as ./... stops at a module's edge, so a test command of the root module
// alone would leave dualresp's modules untested and pass.
//
//	go run ./cmd/testreport -race -count=1 github.com/datasf-mcp/datasf-mcp/... -- -tags e2e -count=1 ./e2e/...
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// skip is one skipped test and the reason it printed.
type skip struct{ pkg, test, reason string }

// report reads the events and writes the plain output to out as they come.
// Its methods may be called by several runs at once (run locks mu).
type report struct {
	mu       sync.Mutex
	out      io.Writer
	raw      io.Writer           // the raw events too, when not nil
	outputs  map[string][]string // package + "\x00" + test -> output lines, until the test ends
	skips    []skip
	packages map[string]float64 // package -> elapsed seconds
	tests    map[string]float64 // package + "." + top-level test -> elapsed seconds
	ran      map[string]bool    // package + "\x00" + test (or subtest) that passed, failed or skipped
	failed   int
}

func newReport(out io.Writer) *report {
	return &report{out: out, outputs: map[string][]string{}, packages: map[string]float64{}, tests: map[string]float64{}, ran: map[string]bool{}}
}

func (r *report) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch {
	case e.Action == "output" && e.Test == "":
		// Package lines: "ok ...", "FAIL ...", build errors, panics, "? ... [no test files]".
		if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS") {
			fmt.Fprint(r.out, e.Output)
		}
	case e.Action == "output":
		r.outputs[key] = append(r.outputs[key], e.Output)
	case e.Test != "" && e.Action == "fail":
		r.failed++
		for _, l := range r.outputs[key] {
			if !strings.HasPrefix(l, "=== ") {
				fmt.Fprint(r.out, l)
			}
		}
		delete(r.outputs, key)
	case e.Test != "" && e.Action == "skip":
		r.skips = append(r.skips, skip{e.Package, e.Test, skipReason(r.outputs[key])})
		delete(r.outputs, key)
	case e.Test != "" && e.Action == "pass":
		delete(r.outputs, key)
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		r.packages[e.Package] += e.Elapsed // a package may be in several runs
	}
	if e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
		r.ran[key] = true
	}
	if e.Test != "" && !strings.Contains(e.Test, "/") && (e.Action == "pass" || e.Action == "fail") {
		r.tests[e.Package+"."+e.Test] = e.Elapsed
	}
}

// skipReason is the message a skipped test logged last (the t.Skip text),
// without the "file.go:12:" prefix; empty when it logged none.
func skipReason(lines []string) string {
	for _, l := range slices.Backward(lines) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if _, after, ok := strings.Cut(l, ".go:"); ok {
			if _, msg, ok := strings.Cut(after, ": "); ok {
				return msg
			}
		}
		return l
	}
	return ""
}

// summary writes the skips (a parent skipped for the same reason as its
// subtests is listed once) and the slowest packages.
func (r *report) summary(w io.Writer, ci bool) {
	fmt.Fprintln(w)
	if len(r.skips) == 0 {
		fmt.Fprintln(w, "testreport: no test skipped")
	} else {
		verb := "skipped tests"
		if ci {
			verb = "skipped tests (CI=true: each one is a failure)"
		}
		fmt.Fprintf(w, "testreport: %d %s:\n", len(r.skips), verb)
		byReason := map[string][]string{}
		var reasons []string
		for _, s := range r.skips {
			reason := cmp.Or(s.reason, "(no reason given)")
			if byReason[reason] == nil {
				reasons = append(reasons, reason)
			}
			byReason[reason] = append(byReason[reason], shortPkg(s.pkg)+"."+s.test)
		}
		for _, reason := range reasons {
			tests := byReason[reason]
			fmt.Fprintf(w, "  %s\n      %s\n", reason, strings.Join(tests, ", "))
		}
	}
	top := 0
	for k := range r.ran {
		if _, test, _ := strings.Cut(k, "\x00"); !strings.Contains(test, "/") {
			top++
		}
	}
	fmt.Fprintf(w, "testreport: %d tests ran (%d top-level, %d subtests)\n", len(r.ran), top, len(r.ran)-top)
	if parts := slowest(r.packages, 6); len(parts) > 0 {
		fmt.Fprintf(w, "testreport: slowest packages: %s\n", strings.Join(parts, ", "))
	}
	if parts := slowest(r.tests, 8); len(parts) > 0 {
		fmt.Fprintf(w, "testreport: slowest tests: %s\n", strings.Join(parts, ", "))
	}
}

// slowest lists the n largest of times, "name 1.2s" (the module path left
// out), largest first.
func slowest(times map[string]float64, n int) []string {
	keys := slices.Collect(maps.Keys(times))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(times[b], times[a]), cmp.Compare(a, b)) })
	var parts []string
	for _, k := range keys[:min(n, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.1fs", shortPkg(k), times[k]))
	}
	return parts
}

// untested returns the modules of which no package was in the runs. A
// package belongs to the module whose path is its longest prefix, so a
// nested module's packages do not count for the module around it.
func (r *report) untested(modules []string) []string {
	tested := map[string]bool{}
	for pkg := range r.packages {
		owner := ""
		for _, m := range modules {
			if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(owner) {
				owner = m
			}
		}
		tested[owner] = true
	}
	var out []string
	for _, m := range modules {
		if !tested[m] {
			out = append(out, m)
		}
	}
	return out
}

// modules returns the paths of the main modules: go.work's, or the one
// module without it.
func modules() ([]string, error) {
	out, err := exec.Command(cmp.Or(os.Getenv("GO"), "go"), "list", "-m", "-f", "{{.Path}}").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	return strings.Fields(string(out)), nil
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/datasf-mcp/datasf-mcp/")
}

func main() {
	start := time.Now()
	r := newReport(os.Stdout)
	if path := os.Getenv("TESTREPORT_JSON"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		defer f.Close()
		r.raw = f
	}
	mods, err := modules()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	runs := splitRuns(os.Args[1:])
	codes := make([]int, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Go(func() { codes[i], errs[i] = r.run(args) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	code := 0 // the first run's that failed
	if i := slices.IndexFunc(codes, func(c int) bool { return c != 0 }); i >= 0 {
		code = codes[i]
	}
	ci := os.Getenv("CI") == "true"
	r.summary(os.Stdout, ci)
	untested := r.untested(mods)
	if len(untested) > 0 {
		fmt.Printf("testreport: no package tested of the modules %s (./... stops at a module's edge: give github.com/datasf-mcp/datasf-mcp/...)\n", strings.Join(untested, ", "))
	}
	fmt.Printf("testreport: go test took %s\n", time.Since(start).Round(time.Second))
	if code == 0 && ci && (len(r.skips) > 0 || len(untested) > 0) {
		code = 1
	}
	os.Exit(code)
}

// splitRuns splits the arguments at each "--" into the runs' arguments.
func splitRuns(args []string) [][]string {
	var runs [][]string
	for {
		i := slices.Index(args, "--")
		if i < 0 {
			return append(runs, args)
		}
		runs = append(runs, args[:i])
		args = args[i+1:]
	}
}

// line takes one line of go test's output: an event, or else text passed on.
func (r *report) line(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.raw != nil {
		fmt.Fprintf(r.raw, "%s\n", b)
	}
	var e event
	if err := json.Unmarshal(b, &e); err != nil {
		fmt.Fprintln(r.out, string(b)) // not an event: pass it on
		return
	}
	r.add(e)
}

// run runs `go test -json ARGS`, adding its events to the report, and
// returns go test's exit code.
func (r *report) run(args []string) (int, error) {
	if i := slices.Index(args, "-tagged-only"); i >= 0 && i+1 < len(args) {
		names, err := taggedTests(".", args[i+1])
		if err != nil {
			return 0, err
		}
		args = append(slices.Clone(args[:i]), args[i+2:]...)
		args = append([]string{"-run", "^(" + strings.Join(names, "|") + ")$"}, args...)
	}
	cmd := exec.Command(cmp.Or(os.Getenv("GO"), "go"), append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		r.line(sc.Bytes())
	}
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return 0, err
		}
		return ee.ExitCode(), nil
	}
	return 0, nil
}

// testFunc is a test, fuzz target or example a test file declares.
var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example)\w*)\(`)

// taggedTests returns the names of the tests declared in the _test.go
// files under root that are built with the tag and not without it, sorted.
func taggedTests(root, tag string) ([]string, error) {
	with, without := build.Default, build.Default
	with.BuildTags = append(slices.Clone(with.BuildTags), tag)
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir, name := filepath.Split(path)
		in, err := with.MatchFile(dir, name)
		if err != nil {
			return err
		}
		out, err := without.MatchFile(dir, name)
		if err != nil || !in || out {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			seen[m[1]] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no test file under %s is built with the tag %q and not without it", root, tag)
	}
	return slices.Sorted(maps.Keys(seen)), nil
}
