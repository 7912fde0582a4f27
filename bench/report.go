package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// report collects the samples of every figure and renders the table.
type report struct {
	cfg         config
	date        time.Time
	samples     map[string][]float64
	verified    map[int]verification
	genTime     time.Duration
	total       time.Duration
	upstreamHWM int64
	missed      []string
	// tokenizer says why the token figures are missing, when they are.
	tokenizer string
	// Part 5: the exported query and the rows of the generated --data file.
	exportQuery string
	csvRows     int
	startup     startupSet
}

func newReport(cfg config) *report {
	return &report{cfg: cfg, date: time.Now().UTC(), samples: map[string][]float64{}, verified: map[int]verification{}}
}

func (r *report) add(key string, v float64) { r.samples[key] = append(r.samples[key], v) }

// med is the median of a figure's samples (0 when it has none).
func (r *report) med(key string) float64 { return median(r.samples[key]) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pairedRange returns the lowest and highest ratio a[i]/b[i] of samples
// taken in the same run; ok is false without samples.
func (r *report) pairedRange(a, b string) (lo, hi float64, ok bool) {
	as, bs := r.samples[a], r.samples[b]
	for i := range min(len(as), len(bs)) {
		x := as[i] / bs[i]
		if !ok || x < lo {
			lo = x
		}
		if !ok || x > hi {
			hi = x
		}
		ok = true
	}
	return lo, hi, ok
}

// row is one line of the table.
type row struct {
	section, figure, ours, base, ratio, goal, status string
}

// goal states: "" (no goal), "met", "MISSED".
func (r *report) judge(figure string, ok bool, why string) string {
	if ok {
		return "met"
	}
	r.missed = append(r.missed, figure+": "+why)
	return "MISSED"
}

// rows builds the table from the medians. It records missed goals.
func (r *report) rows() []row {
	r.missed = nil
	cfg := r.cfg
	var out []row

	if cfg.Parts[1] {
		out = append(out, r.payloadRows()...)
	}
	if cfg.Parts[2] {
		out = append(out, r.retrievalRows()...)
	}
	if cfg.Parts[3] {
		out = append(out, r.overheadRows()...)
	}
	if cfg.Parts[4] {
		out = append(out, r.microRows()...)
	}
	if cfg.Parts[5] {
		out = append(out, r.startupRows()...)
	}
	if cfg.Parts[6] {
		out = append(out, r.exportSpeedRows()...)
	}
	return out
}

// payloadRows are the rows of part 1.
func (r *report) payloadRows() []row {
	cfg := r.cfg
	var out []row
	const p1 = "1 payload"
	var wholeAt1000, wholeLargest float64
	for _, n := range cfg.Sizes {
		for _, w := range []struct{ key, name string }{{"sc", "structuredContent bytes"}, {"whole", "CallToolResult JSON bytes"}} {
			ours, base := r.med(keyPayload(n, w.key)), r.med(keyPayload(n, w.key+".base"))
			fig := fmt.Sprintf("%s rows: %s", group(n), w.name)
			rw := row{section: p1, figure: fig, ours: group(int(ours)), base: group(int(base)), ratio: times(base / ours)}
			if n >= 1000 {
				rw.goal = ">= 50x smaller"
				rw.status = r.judge(fig, base/ours >= 50, fmt.Sprintf("baseline/ours = %.1fx", base/ours))
			}
			out = append(out, rw)
		}
		ours, base := r.med(keyPayload(n, "whole")), r.med(keyPayload(n, "whole.base"))
		out = append(out, row{section: p1, figure: fmt.Sprintf("%s rows: est. tokens (CallToolResult bytes/4)", group(n)),
			ours: group(int(ours / 4)), base: group(int(base / 4)), ratio: times(base / ours)})
		if n == 1000 {
			wholeAt1000 = ours
		}
		wholeLargest = ours
		if v, ok := r.verified[n]; ok {
			fig := fmt.Sprintf("%s rows: retrievable via link (%s)", group(n), v.Via)
			out = append(out, row{section: p1, figure: fig,
				ours:  fmt.Sprintf("%s/%s distinct (%.1f%%)", group(int(v.Distinct)), group(int(v.Want)), 100*float64(v.Distinct)/float64(v.Want)),
				base:  fmt.Sprintf("%s/%s inline", group(min(n, cfg.Inline)), group(n)),
				ratio: "", goal: "100%",
				status: r.judge(fig, v.OK(), fmt.Sprintf("read %d rows, %d distinct, of %d", v.Rows, v.Distinct, v.Want))})
		}
	}
	out = append(out, r.leanRows()...)
	if wholeAt1000 > 0 {
		largest := cfg.Sizes[len(cfg.Sizes)-1]
		fig := fmt.Sprintf("flatness: CallToolResult bytes at %s rows / at 1,000 rows", group(largest))
		ratio := wholeLargest / wholeAt1000
		out = append(out, row{section: p1, figure: fig, ours: fmt.Sprintf("%.3f", ratio), base: fmt.Sprintf("%.3f", r.med(keyPayload(largest, "whole.base"))/r.med(keyPayload(1000, "whole.base"))),
			goal: "<= 1.10", status: r.judge(fig, ratio <= 1.10, fmt.Sprintf("%.3f", ratio))})
	}

	return out
}

// leanRows are part 1's figures of what the model pays in the small.
func (r *report) leanRows() []row {
	const p1 = "1 payload"
	var out []row
	tokens := func(key string) string {
		if len(r.samples[key]) == 0 {
			return "n/a"
		}
		return group(int(r.med(key)))
	}
	if len(r.samples["lean.tools.bytes"]) == 0 {
		return nil
	}
	fig := "tools/list: Claude tokens (bytes)"
	rw := row{section: p1, figure: fig, ours: fmt.Sprintf("%s (%s)", tokens("lean.tools.tokens"), group(int(r.med("lean.tools.bytes")))), goal: "<= 1,600 tokens"}
	if n := r.samples["lean.tools.tokens"]; len(n) > 0 {
		rw.status = r.judge(fig, r.med("lean.tools.tokens") <= 1600, fmt.Sprintf("%.0f tokens", r.med("lean.tools.tokens")))
	} else {
		rw.status = "not measured: " + r.tokenizer
	}
	out = append(out, rw)
	for _, q := range []struct {
		key, what string
		goal      float64
	}{{"group", "10-row two-column GROUP BY", 1000}, {"star", "SELECT * on the 22-column incidents (15 sample rows asked of a larger result)", dualresp.DefaultByteBudget},
		{"starwhole", "SELECT * on the 22-column incidents, a whole 10-row answer (WholeByteBudget)", 12 * 1024}} {
		b := r.med("lean." + q.key + ".bytes")
		if b == 0 {
			continue
		}
		fig := fmt.Sprintf("%s: model-visible bytes (tokens)", q.what)
		out = append(out, row{section: p1, figure: fig, ours: fmt.Sprintf("%s (%s)", group(int(b)), tokens("lean."+q.key+".tokens")),
			goal: "<= " + group(int(q.goal)) + " bytes", status: r.judge(fig, b <= q.goal, fmt.Sprintf("%.0f bytes", b))})
	}
	if b := r.med("lean.group.view.bytes"); b > 0 {
		fig := "10-row two-column GROUP BY: the larger host view, text and link or structuredContent (bytes)"
		out = append(out, row{section: p1, figure: fig, ours: group(int(b)), goal: "<= 1,000 bytes",
			status: r.judge(fig, b <= 1000, fmt.Sprintf("%.0f bytes", b))})
	}
	for _, n := range r.cfg.Sizes {
		out = append(out, row{section: p1, figure: fmt.Sprintf("%s rows: model-visible Claude tokens", group(n)), ours: tokens(keyPayload(n, "visible.tokens"))})
	}
	return out
}

// retrievalRows are the rows of part 2.
func (r *report) retrievalRows() []row {
	cfg := r.cfg
	var out []row
	const p2 = "2 retrieval"
	for _, i := range []int{cfg.RetrievalSmall, cfg.RetrievalLarge} {
		n := cfg.Sizes[i]
		ours, base := r.med(keyRetrieval(n, "ours")), r.med(keyRetrieval(n, "base"))
		fig := fmt.Sprintf("%s rows: rows/s (ours: REST export ndjson; baseline: direct Resource API paging)", group(n))
		out = append(out, row{section: p2, figure: fig, ours: group(int(ours)), base: group(int(base)),
			ratio: fmt.Sprintf("%.2f", ours/base), goal: ">= 0.90",
			status: r.judge(fig, ours/base >= 0.9, fmt.Sprintf("ours/baseline = %.2f", ours/base))})
		if lo, hi, ok := r.pairedRange(keyRetrieval(n, "ours"), keyRetrieval(n, "base")); ok {
			out = append(out, row{section: p2, figure: fmt.Sprintf("%s rows: ours/baseline within each run (lowest - highest of %d runs)", group(n), len(r.samples[keyRetrieval(n, "ours")])),
				ratio: fmt.Sprintf("%.2f - %.2f", lo, hi)})
		}
		out = append(out, row{section: p2, figure: fmt.Sprintf("%s rows: export MB/s (ndjson)", group(n)), ours: fmt.Sprintf("%.1f", r.med(keyRetrieval(n, "ours.mbps")))})
	}
	small, large := cfg.Sizes[cfg.RetrievalSmall], cfg.Sizes[cfg.RetrievalLarge]
	idle, hs, hl := r.med("rss.idle"), r.med(keyRetrieval(small, "rss")), r.med(keyRetrieval(large, "rss"))
	out = append(out, row{section: p2, figure: "export server peak RSS (VmHWM) before exporting", ours: mib(idle)})
	out = append(out, row{section: p2, figure: fmt.Sprintf("export server peak RSS after %s rows", group(small)), ours: mib(hs), base: mib(idle), ratio: fmt.Sprintf("%.2f", hs/idle)})
	fig := fmt.Sprintf("export server peak RSS after %s rows (baseline: after %s)", group(large), group(small))
	out = append(out, row{section: p2, figure: fig, ours: mib(hl), base: mib(hs), ratio: fmt.Sprintf("%.2f", hl/hs), goal: "<= 1.10 (no growth)",
		status: r.judge(fig, hl/hs <= 1.10, fmt.Sprintf("%s -> %s", mib(hs), mib(hl)))})
	if r.upstreamHWM > 0 {
		out = append(out, row{section: p2, figure: "upstream (fake Socrata, holds all datasets in SQLite) peak RSS", ours: mib(float64(r.upstreamHWM))})
	}

	return out
}

// overheadRows are the rows of part 3.
func (r *report) overheadRows() []row {
	var out []row
	const p3 = "3 overhead"
	for _, mode := range []string{"warm", "cold"} {
		label := map[string]string{"warm": "schema cached", "cold": "schema not cached"}[mode]
		for _, p := range []string{"p50", "p99"} {
			over, up := r.med(keyOverhead(mode, "over."+p)), r.med(keyOverhead(mode, "up."+p))
			out = append(out, row{section: p3, figure: fmt.Sprintf("%s: overhead %s (baseline: upstream handler time %s)", label, p, p),
				ours: dur(over), base: dur(up), ratio: fmt.Sprintf("%.2f", over/up)})
		}
		out = append(out, row{section: p3, figure: fmt.Sprintf("%s: latency p50 / p99", label),
			ours: dur(r.med(keyOverhead(mode, "lat.p50"))) + " / " + dur(r.med(keyOverhead(mode, "lat.p99")))})
		reqs, worst := r.med(keyOverhead(mode, "reqs")), slices.Max(append([]float64{0}, r.samples[keyOverhead(mode, "reqs.max")]...))
		rw := row{section: p3, figure: fmt.Sprintf("%s: upstream requests per call (mean; max)", label), ours: fmt.Sprintf("%.2f; %.0f", reqs, worst)}
		rt := r.med(keyOverhead(mode, "rt.p50"))
		if rt > 0 {
			goal := map[string]float64{"warm": 1.25, "cold": 2.25}[mode]
			fig := fmt.Sprintf("%s: latency p50 with an upstream answering in %s (baseline: %s)", label, upstreamLatency, upstreamLatency)
			ratio := rt / float64(upstreamLatency)
			out = append(out, row{section: p3, figure: fig, ours: dur(rt), base: dur(float64(upstreamLatency)),
				ratio: fmt.Sprintf("%.2f", ratio), goal: fmt.Sprintf("<= %.2fx", goal),
				status: r.judge(fig, ratio <= goal, fmt.Sprintf("%.2fx the upstream's latency", ratio))})
		}
		if mode == "warm" {
			rw.goal = "<= 2"
			rw.base = "2"
			rw.ratio = fmt.Sprintf("%.2f", reqs/2)
			rw.status = r.judge(rw.figure, worst <= 2, fmt.Sprintf("max %.0f requests", worst))
		}
		out = append(out, rw)
	}

	return out
}

// microRows are the rows of part 4.
func (r *report) microRows() []row {
	var out []row
	const p4 = "4 micro"
	pns, cns := r.med("micro.parse.ns"), r.med("micro.correct.ns")
	out = append(out, row{section: p4, figure: "soql.Parse: ns/op", ours: group(int(pns))})
	out = append(out, row{section: p4, figure: "soql.Parse: allocs/op; B/op", ours: fmt.Sprintf("%.0f; %s", r.med("micro.parse.allocs"), group(int(r.med("micro.parse.bytes"))))})
	out = append(out, row{section: p4, figure: "fuzzymatch.Correct, 100 columns, 2 typos: ns/op (baseline: soql.Parse)", ours: group(int(cns)), base: group(int(pns)), ratio: times(cns / pns)})
	out = append(out, row{section: p4, figure: "fuzzymatch.Correct: allocs/op; B/op (baseline: soql.Parse)",
		ours:  fmt.Sprintf("%.0f; %s", r.med("micro.correct.allocs"), group(int(r.med("micro.correct.bytes")))),
		base:  fmt.Sprintf("%.0f; %s", r.med("micro.parse.allocs"), group(int(r.med("micro.parse.bytes")))),
		ratio: times(r.med("micro.correct.allocs") / r.med("micro.parse.allocs"))})
	return out
}

// table renders the rows as a markdown table.
func (r *report) table() string {
	var b strings.Builder
	b.WriteString("| part | figure | ours | baseline | ratio | goal | status |\n|---|---|---:|---:|---:|---|---|\n")
	for _, rw := range r.rows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", rw.section, rw.figure, rw.ours, rw.base, rw.ratio, rw.goal, rw.status)
	}
	return b.String()
}

// markdown is the whole docs/benchmarks.md.
func (r *report) markdown() string {
	cfg := r.cfg
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("Generated by `make bench`, which runs `go run ./bench` (flags: `-runs N`, default 5; `-quick` for a fast smoke run;\n")
	b.WriteString("`-parts 1,2,3,4,5,6` to measure only some parts; `-out FILE`, default `docs/benchmarks.md`; `-profile DIR` for CPU\n")
	b.WriteString("profiles of the export). Do not edit by hand:\n")
	b.WriteString("rerun it. Every figure is the **median of the runs**, measured side by side with its baseline in the same run.\n\n")
	mode := "default"
	if cfg.Quick {
		mode = "quick (smoke sizes; figures are not representative)"
	}
	fmt.Fprintf(&b, "- Date: %s\n", r.date.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- Machine: %s, %d logical CPUs, %s\n", cpuModel(), runtime.NumCPU(), osName())
	fmt.Fprintf(&b, "- Go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if len(cfg.Parts) < 6 {
		var ps []string
		for p := 1; p <= 6; p++ {
			if cfg.Parts[p] {
				ps = append(ps, fmt.Sprint(p))
			}
		}
		mode += "; parts " + strings.Join(ps, ", ") + " only"
	}
	fmt.Fprintf(&b, "- Mode: %s; %d runs; sizes %s rows; generating them took %s; the whole run %s\n\n",
		mode, cfg.Runs, joinGrouped(cfg.Sizes), r.genTime.Round(time.Second), r.total.Round(time.Second))
	b.WriteString(r.table())
	b.WriteString("\n")
	if len(r.missed) > 0 {
		b.WriteString("## Missed goals\n\n")
		for _, m := range r.missed {
			fmt.Fprintf(&b, "- %s\n", m)
		}
		b.WriteString("\n")
	}
	b.WriteString(methodNotes(cfg))
	return b.String()
}

func methodNotes(cfg config) string {
	return fmt.Sprintf(`## How it is measured

Datasets are generated once per run of the driver: the offline sample data's police incident generator
(package localportal/sampledata, 22 columns shaped like DataSF's wg3w-h783) with %s rows each, loaded into
localportal (SQLite) with AddGenerated, in a child process that plays the Socrata portal.

1. **Payload.** query_datasf is called with %q through the real server (datasf.New, mcp-go
   in-process client). Bytes are those of json.Marshal of the structuredContent and of the whole
   CallToolResult as the client received it. Tokens are estimated as bytes/4 (no tokenizer).
   The baseline returns the first min(n, %d) rows inline: structuredContent {"results": rows} plus
   the same JSON as text (mcp-go's NewToolResultStructuredOnly, as the MCP spec recommends).
   Ratio = baseline/ours. Retrievability (first run only): the result's link is paged with
   GET /resources/{id}?offset=&limit=%d, or for the largest size read whole with
   /export?format=ndjson; every row's incident_id is checked to be a distinct generated row.
2. **Full retrieval.** A fresh child process per run serves our REST endpoint (socrata client ->
   the datasf SoQL executor -> dualresp); the result is created with query_datasf in that child and
   exported with GET /resources/{id}/export?format=ndjson. The baseline pages the same upstream's
   /resource/{id}.json directly with the stored query's SoQL and the same page size (%s rows,
   datasf's export page), one page after the other as an application would, read with
   socrata.RowStream.NextRaw. Ours passes row bytes through (one scan per row in the socrata
   client, none in the export writer) and asks for page k+1 while it sends page k, so the
   portal's work on the next page overlaps ours; this is why ours can beat the baseline on a
   portal that builds a page before answering it, as the fake does. Both are consumed over loopback HTTP
   by this process with the same per-row work (the row's bytes, checked to be valid JSON); the
   order of ours and the baseline alternates between runs. Peak RSS is VmHWM of the export child
   from /proc/PID/status: before exporting, after the smaller export, after the larger one
   (VmHWM never decreases, so equal figures mean no growth). Ratio = ours/baseline.
3. **Overhead.** %d query_datasf calls per run and mode on the %s-row dataset, with a query a model
   would write (two misspelt columns, corrected): latency measured at the MCP client minus the
   upstream time, which is the union of the fake portal's handler intervals during the call (the
   count and the sample requests run in parallel, so their times are not added). "Schema not
   cached" invalidates the schema cache before each call. Requests per call come from
   the fake portal's request count. Ratio = overhead/upstream time.
4. **Micro.** testing.Benchmark (benchtime %s) inside the driver, on a 100-column schema.
5. **Start-up.** The driver builds cmd/datasf-mcp and starts `+"`datasf-mcp serve --http ADDR --offline`"+` (a free
   loopback port, an empty user cache directory) once per run. Ready is when GET /healthz answers 200
   and then an MCP initialize request posted to /mcp is answered; RSS is VmRSS from /proc/PID/status
   at that moment. The baseline is `+"`datasf-mcp --help`"+`: wall time to exit and peak RSS (getrusage).
   Then one search_datasf call and one query_datasf count on the largest sample dataset are timed.
6. **Export speed.** The complete result of `+"`SELECT *`"+` (%s rows) through the link against what a
   user does without us: paging the portal directly, 50,000 rows a request, one request after the
   other until a short page. The fake portal answers like Socrata by a cost model: each request takes
   0.3 s plus 30 µs a row it returns (or what it really took, if longer), and requests at once are
   served at once. Its rows are made from a 1,000-row sample of the incident generator, each
   numbered (row i is sample row i mod 1,000 with its number i), so the portal costs what the model
   says and not this machine's CPU. A fresh export child per run serves the link with the product's
   default upstream limits (4 requests at once, 5 a second); the result is created with query_datasf
   before the clock starts, and GET /resources/{id}/export?format=ndjson is read uncompressed, as the
   baseline reads the portal. Rows in order: a checksum of every row, in order, equals the direct
   pages'. Peak RSS is VmHWM of the export child. Ratio = baseline/ours.
`, joinGrouped(cfg.Sizes), queryAll, cfg.Inline, cfg.RESTPage, group(cfg.PageSize), cfg.OverheadCalls,
		group(cfg.Sizes[cfg.OverheadDataset]), cfg.MicroTime, joinGrouped(cfg.ExportSizes))
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// osName is PRETTY_NAME of /etc/os-release and the kernel release.
func osName() string {
	name := runtime.GOOS
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				name = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		name += ", Linux " + strings.TrimSpace(string(b))
	}
	return name
}

// group writes n with thousands separators.
func group(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func joinGrouped(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = group(x)
	}
	return strings.Join(parts, " / ")
}

func times(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0fx", x)
	}
	return fmt.Sprintf("%.2fx", x)
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func dur(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	}
}
