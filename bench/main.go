// Command bench measures datasf-mcp side by side with its baselines, in one
// run, and writes docs/benchmarks.md:
//
//  1. the LLM-facing payload of query_datasf against returning up to 1,000
//     rows inline, and that every row is retrievable through the link;
//  2. full retrieval (rows/s, peak RSS) through the REST export against
//     paging the fake Resource API directly;
//  3. query_datasf's own overhead (latency minus upstream time) and upstream
//     requests per call, with the schema cached and not;
//  4. micro benchmarks of SoQL parsing and fuzzy correction;
//  5. start-up: `datasf-mcp --offline` start to ready and its RSS against
//     `datasf-mcp --help` (startup.go);
//  6. export speed: the complete result through the link against paging
//     the portal directly, 50,000 rows a request in sequence, on an
//     upstream with Socrata's cost per request and per row (exportspeed.go).
//
// Usage:
//
//	go run ./bench [-runs 5] [-quick] [-parts 1,2,3,4,5,6] [-out docs/benchmarks.md] [-profile DIR]
//
// The server sides run in child processes (the same binary, re-executed with
// DATASF_BENCH_CHILD set) so their peak RSS can be read from /proc.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	if code, ran := runChildIfAsked(); ran {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := realMain(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// keptSectionsMarker starts the part of the report that tests write
// (TestSearchEvalBinary in cmd/datasf-mcp): a rerun keeps it.
const keptSectionsMarker = "<!-- sections below are written by tests; make bench keeps them -->"

// config is one benchmark run's settings.
type config struct {
	Runs  int
	Quick bool
	Out   string
	// Parts are the parts to measure (1 payload, 2 retrieval, 3 overhead,
	// 4 micro, 5 start-up); the report has only their rows.
	Parts map[int]bool
	// ProfileDir, when set, receives CPU profiles of the export server and
	// the upstream taken during one extra large export.
	ProfileDir string

	// Sizes are the result sizes of part 1; the generated datasets.
	Sizes []int
	// RetrievalSizes index Sizes: the small and the large full retrieval.
	RetrievalSmall, RetrievalLarge int
	// OverheadDataset indexes Sizes: the dataset of part 3.
	OverheadDataset int
	// OverheadCalls is the number of query_datasf calls per run and mode.
	OverheadCalls int
	// MicroTime is the benchtime of each micro benchmark.
	MicroTime time.Duration
	// Inline is the baseline's inline row cap.
	Inline int
	// PageSize is the export page size (datasf's streamPageRows) and the
	// baseline's page size.
	PageSize int
	// RESTPage is the page size used to verify retrieval through pages.
	RESTPage int
	// ExportSizes are the results of part 6 (export speed).
	ExportSizes []int
}

func defaultConfig(quick bool) config {
	c := config{
		Runs: 5, Out: "docs/benchmarks.md", Parts: map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true},
		Sizes:          []int{10, 1_000, 100_000, 1_000_000},
		RetrievalSmall: 2, RetrievalLarge: 3, OverheadDataset: 1,
		OverheadCalls: 200, MicroTime: time.Second,
		Inline: 1_000, PageSize: 50_000, RESTPage: 10_000,
		ExportSizes: []int{200_000, 1_000_000},
	}
	if quick {
		c.Quick = true
		c.Sizes = []int{10, 1_000, 2_000, 5_000}
		c.OverheadCalls = 10
		c.MicroTime = 20 * time.Millisecond
		c.ExportSizes = []int{20_000, 100_000}
	}
	return c
}

func realMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var err error
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 5, "runs per figure; each figure is the median of the runs")
	quick := fs.Bool("quick", false, "smoke mode: small datasets, few calls, short micro benchmarks")
	out := fs.String("out", "docs/benchmarks.md", "markdown file to write (empty: do not write)")
	profile := fs.String("profile", "", "directory for CPU profiles of the export server and the upstream during one extra large export")
	parts := fs.String("parts", "1,2,3,4,5,6", "comma-separated parts to measure: 1 payload, 2 full retrieval, 3 tool overhead, 4 micro, 5 start-up, 6 export speed")
	if err = fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; flags are -runs N, -quick, -out FILE, -profile DIR", fs.Args())
	}
	if *runs < 1 {
		return fmt.Errorf("-runs must be at least 1; got %d", *runs)
	}
	cfg := defaultConfig(*quick)
	cfg.Runs, cfg.Out, cfg.ProfileDir = *runs, *out, *profile
	if cfg.Parts, err = parseParts(*parts); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rep, err := run(ctx, cfg, log)
	if err != nil {
		return err
	}
	text := rep.markdown()
	if _, err := io.WriteString(stdout, rep.table()); err != nil {
		return err
	}
	if len(rep.missed) > 0 {
		fmt.Fprintf(stdout, "\nMissed goals:\n")
		for _, m := range rep.missed {
			fmt.Fprintf(stdout, "- %s\n", m)
		}
	}
	if cfg.Out != "" {
		if err := os.MkdirAll(filepath.Dir(cfg.Out), 0o755); err != nil {
			return fmt.Errorf("-out %s: %w", cfg.Out, err)
		}
		// Sections that tests write (the search benchmark) follow a marker
		// line; they are kept as they are.
		if old, err := os.ReadFile(cfg.Out); err == nil {
			if i := strings.Index(string(old), keptSectionsMarker); i >= 0 {
				text = strings.TrimRight(text, "\n") + "\n\n" + string(old[i:])
			}
		}
		if err := os.WriteFile(cfg.Out, []byte(text), 0o644); err != nil {
			return fmt.Errorf("writing -out %s: %w", cfg.Out, err)
		}
		log.Info("wrote report", "file", cfg.Out)
	}
	return nil
}

// run measures everything and returns the report.
func run(ctx context.Context, cfg config, log *slog.Logger) (*report, error) {
	rep := newReport(cfg)
	start := time.Now()

	if cfg.Parts[4] {
		log.Info("part 4: micro benchmarks")
		if err := micro(cfg, rep); err != nil {
			return nil, fmt.Errorf("micro benchmarks: %w", err)
		}
	}
	if cfg.Parts[5] {
		log.Info("part 5: start-up of the offline server")
		if err := startup(ctx, cfg, rep); err != nil {
			return nil, fmt.Errorf("start-up: %w", err)
		}
	}
	if cfg.Parts[6] {
		if err := exportSpeed(ctx, cfg, rep, log); err != nil {
			return nil, fmt.Errorf("export speed: %w", err)
		}
	}
	if !cfg.Parts[1] && !cfg.Parts[2] && !cfg.Parts[3] {
		rep.total = time.Since(start)
		return rep, nil
	}

	log.Info("generating datasets in the upstream child", "sizes", cfg.Sizes)
	genStart := time.Now()
	up, err := startChild(roleUpstream, []string{envSizes + "=" + joinInts(cfg.Sizes)}, 20*time.Minute)
	if err != nil {
		return nil, err
	}
	defer up.Stop()
	rep.genTime = time.Since(genStart)

	h, err := newHarness(ctx, up)
	if err != nil {
		return nil, err
	}
	defer h.Close()

	if cfg.Parts[1] {
		log.Info("part 1: LLM-facing payload")
		if err := payload(ctx, cfg, h, rep, log); err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
	}
	if cfg.Parts[3] {
		log.Info("part 3: tool overhead")
		if err := overhead(ctx, cfg, h, rep); err != nil {
			return nil, fmt.Errorf("overhead: %w", err)
		}
	}
	if cfg.Parts[2] {
		log.Info("part 2: full retrieval")
		if err := retrieval(ctx, cfg, h, rep, log); err != nil {
			return nil, fmt.Errorf("retrieval: %w", err)
		}
	}
	if m, err := readMem(up.PID()); err == nil {
		rep.upstreamHWM = m.HWM
	}
	rep.total = time.Since(start)
	if ctx.Err() != nil {
		return nil, errors.New("interrupted")
	}
	return rep, nil
}

// parseParts reads -parts: a comma-separated list of 1 to 5.
func parseParts(s string) (map[int]bool, error) {
	parts := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 6 {
			return nil, fmt.Errorf("-parts must list parts 1 to 6 separated by commas (1 payload, 2 full retrieval, 3 tool overhead, 4 micro, 5 start-up, 6 export speed); got %q", s)
		}
		parts[n] = true
	}
	return parts, nil
}

func joinInts(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s
}
