//go:build e2e

package dualresp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestByteBudgetProperty checks that what the model is given (the
// structured content, the text and the link, as a tool result on the wire
// has them: ModelBytes) stays within the byte budget whatever the rows,
// columns and metadata, that it marks what it cut, and that included rows
// are the leading sample rows.
func TestByteBudgetProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		budget := rapid.SampledFrom([]int{0, 2048, 4096, 12 * 1024}).Draw(rt, "budget")
		wholeBudget := rapid.SampledFrom([]int{-1, 0, 3000}).Draw(rt, "whole budget")
		ncols := rapid.IntRange(1, 300).Draw(rt, "columns")
		nrows := rapid.IntRange(0, 40).Draw(rt, "rows")
		maxLen := rapid.SampledFrom([]int{5, 100, 2000, 20000}).Draw(rt, "maxLen")
		char := rapid.SampledFrom([]string{"a", "é", "😀", `"`, "\n"}).Draw(rt, "char")
		var cols []dualresp.Column
		lens := make([]int, ncols)
		for c := range ncols {
			cols = append(cols, dualresp.Column{Name: fmt.Sprintf("column_%d", c), Type: "text"})
			lens[c] = rapid.IntRange(0, maxLen).Draw(rt, fmt.Sprintf("len%d", c))
		}
		var rows []json.RawMessage
		for r := range nrows {
			m := map[string]any{}
			for c := range ncols {
				n := (lens[c] * (r + 1)) % (maxLen + 1)
				switch c % 3 {
				case 0:
					m[cols[c].Name] = strings.Repeat(char, n)
				case 1:
					m[cols[c].Name] = r*1000 + c
				default:
					m[cols[c].Name] = map[string]any{"nested": strings.Repeat(char, n), "list": []int{1, 2, 3}}
				}
			}
			b, _ := json.Marshal(m)
			rows = append(rows, b)
		}
		metaLen := rapid.SampledFrom([]int{0, 100, 50000}).Draw(rt, "metaLen")
		sampleSize := max(nrows, 1)
		if nrows > 1 && rapid.Bool().Draw(rt, "partial sample") {
			sampleSize = nrows - 1
		}
		srv, err := dualresp.New(dualresp.Options{BaseURL: "http://127.0.0.1:8765", Executors: map[string]dualresp.Executor{"gen": &rowsExecutor{rows: rows}},
			ByteBudget: budget, WholeByteBudget: wholeBudget, CleanupInterval: -1})
		if err != nil {
			rt.Fatal(err)
		}
		defer srv.Close()
		resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{
			Name: strings.Repeat("n", metaLen), Columns: cols, SampleSize: sampleSize,
			Query:    dualresp.Query{Kind: "gen", Text: strings.Repeat("q", metaLen)},
			Metadata: map[string]any{"note": strings.Repeat(char, metaLen), "list": make([]int, metaLen/10)},
		})
		if err != nil {
			rt.Fatal(err)
		}
		limit := budget
		if limit == 0 {
			limit = dualresp.DefaultByteBudget
		}
		limit = max(limit, dualresp.MinByteBudget)
		if sampleSize >= nrows { // the sample is the whole result: the larger budget
			switch wholeBudget {
			case 0:
				limit = max(limit, dualresp.DefaultWholeByteBudget)
			case -1:
			default:
				limit = max(limit, wholeBudget)
			}
		}
		sc := resp.StructuredContent()
		b, err := json.Marshal(sc)
		if err != nil {
			rt.Fatal(err)
		}
		if len(b) > limit {
			rt.Fatalf("structured content is %d bytes; budget %d", len(b), limit)
		}
		// The adapters' modules check that their SDK's content and this
		// structured content together stay within ModelBytes
		// (TestContentWithinModelBytes in dualresp/mcpgo and dualresp/gosdk).
		wc, _ := json.Marshal(toolResult(resp)["content"])
		if n := len(wc) + len(b); n > resp.ModelBytes() || resp.ModelBytes() > limit {
			rt.Fatalf("model-visible payload: content %d + structured %d bytes, ModelBytes %d; budget %d", len(wc), len(b), resp.ModelBytes(), limit)
		}
		meta := sc.Metadata
		results := sc.Results
		if meta.SampleCount != len(results) {
			rt.Errorf("sample_count = %v; results has %d", meta.SampleCount, len(results))
		}
		sampled := min(nrows, sampleSize)
		if len(results) < sampled && !meta.SampleReduced {
			rt.Errorf("%d of %d rows included but sample_reduced = %v", len(results), sampled, meta.SampleReduced)
		}
		if len(results) == sampled && meta.SampleReduced {
			rt.Errorf("all rows included but sample_reduced = %v", meta.SampleReduced)
		}
		cut := strings.Contains(string(b), dualresp.TruncationMark)
		if cut && !meta.ValuesTruncated && !meta.MetadataTruncated {
			rt.Errorf("values were cut but values_truncated = %v", meta.ValuesTruncated)
		}
		// Each included row is the corresponding sample row, possibly cut.
		for i, r := range results {
			var orig map[string]any
			_ = json.Unmarshal(rows[i], &orig)
			var got map[string]any
			if err := json.Unmarshal(r, &got); err != nil {
				rt.Fatalf("row %d: %v", i, err)
			}
			if len(got) != len(orig) {
				rt.Fatalf("row %d has %d keys; want %d", i, len(got), len(orig))
			}
			for k, v := range got {
				if s, ok := v.(string); ok && strings.HasSuffix(s, dualresp.TruncationMark) {
					if !utf8.ValidString(s) {
						rt.Errorf("row %d %s: cut value is not valid UTF-8", i, k)
					}
					continue
				}
				if diff := cmp.Diff(jsonValue(rt, orig[k]), jsonValue(rt, v)); diff != "" {
					rt.Errorf("row %d %s changed without a mark (-want +got):\n%s", i, k, diff)
				}
			}
		}
	})
}
