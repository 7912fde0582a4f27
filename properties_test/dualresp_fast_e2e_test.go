//go:build e2e

package properties_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// Property D6: whatever the result size, row width, value lengths, name and
// metadata, what the model is given (the JSON of the structured content
// alone, and with the text and resource_link of the CallToolResult) stays
// within the byte budget; the
// counts it reports stay true (sample_count is the number of rows, total is
// the real total, truncated says whether rows were left out).
func TestFastPayloadWithinBudget(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) { checkPayloadWithinBudget(t, plainNames) })
}

// Property D6 again, with result names made of characters JSON escapes to
// six bytes (e.g. a name of 253 "&"): cut to 256 characters such a name alone
// nearly filled the minimum budget (found by this property; fitFixed now cuts
// the name further when needed).
func TestFastPayloadWithinBudgetEscapedNames(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) { checkPayloadWithinBudget(t, escapedNames) })
}

// Property D5: Parse(render(response)) gives the response's total, sample,
// columns, URI and URL, whichever way it is rendered: the CallToolResult
// value, its JSON, a JSON-RPC response holding it, the structured content
// map and its JSON.
func TestFastParseRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		dc := genDualCase(t, plainNames)
		srv := newBudgetServer(t, dc)
		defer srv.Close()
		resp, err := srv.CreateResponse(context.Background(), dc.spec)
		if err != nil {
			t.Fatalf("CreateResponse: %v", err)
		}
		sc := resp.StructuredContent()
		scJSON, _ := json.Marshal(sc)
		var shown struct {
			Results  []json.RawMessage `json:"results"`
			Metadata struct {
				Columns []string `json:"columns"` // names
			} `json:"metadata"`
		}
		if err := json.Unmarshal(scJSON, &shown); err != nil {
			t.Fatalf("decoding the structured content: %v", err)
		}
		res := mcpgo.CallToolResult(resp)
		resJSON, _ := json.Marshal(res)
		rpc := []byte(`{"jsonrpc":"2.0","id":7,"result":` + string(resJSON) + `}`)
		renders := []struct {
			name   string
			parsed *dualresp.Parsed
		}{
			{"Parse(*CallToolResult)", dualresp.Parse(res)},
			{"Parse(CallToolResult JSON)", dualresp.Parse(resJSON)},
			{"Parse(JSON-RPC response)", dualresp.Parse(rpc)},
			{"Parse(JSON-RPC response string)", dualresp.Parse(string(rpc))},
			{"ParseStructured(map)", dualresp.ParseStructured(sc)},
			{"ParseStructured(JSON)", dualresp.ParseStructured(scJSON)},
		}
		for _, r := range renders {
			p := r.parsed
			if p == nil {
				t.Fatalf("%s = nil; want the dual response", r.name)
			}
			if p.TotalCount != resp.TotalCount() || p.ResourceURI != resp.URI() || p.ResourceURL != resp.URL() {
				t.Fatalf("%s: total %d, URI %q, URL %q; want %d, %q, %q", r.name, p.TotalCount, p.ResourceURI, p.ResourceURL, resp.TotalCount(), resp.URI(), resp.URL())
			}
			if d := cmp.Diff(shown.Metadata.Columns, columnNames(p.Columns), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%s: columns differ (-shown +parsed):\n%s", r.name, d)
			}
			if len(p.Sample) != len(shown.Results) {
				t.Fatalf("%s: %d sample rows; the response shows %d", r.name, len(p.Sample), len(shown.Results))
			}
			for i := range p.Sample {
				if d := cmp.Diff(canonRaw(shown.Results[i]), canonRaw(p.Sample[i])); d != "" {
					t.Fatalf("%s: sample row %d differs (-shown +parsed):\n%s", r.name, i, d)
				}
			}
		}
		// The columns shown are the spec's (all, or a prefix when cut).
		if n := len(shown.Metadata.Columns); n > len(dc.columns) || cmp.Diff(columnNames(dc.columns[:n]), shown.Metadata.Columns, cmpopts.EquateEmpty()) != "" {
			t.Fatalf("columns shown %v are not a prefix of the result's %v", shown.Metadata.Columns, dc.columns)
		}
	})
}

// valueUnits are the pieces generated text is made of: ASCII, multi-byte
// characters, and characters JSON escapes (quote, backslash, <, &, >,
// control characters).
var valueUnits = []string{"a", "Zz ", "é", "日本", "😀", `"`, `\`, "<&>", "\x01", "\n", "x y z "}

// randValue makes a JSON value for a row from r: text of up to maxLen
// units, numbers, booleans, nulls and small objects.
func randValue(r *rand.Rand, maxLen int) any {
	switch r.IntN(6) {
	case 0, 1:
		n := r.IntN(21)
		if r.IntN(3) == 0 {
			n = r.IntN(maxLen + 1)
		}
		return strings.Repeat(valueUnits[r.IntN(len(valueUnits))], n)
	case 2:
		return json.Number(fmt.Sprint(r.Int64() - r.Int64()))
	case 3:
		return r.IntN(2) == 0
	case 4:
		return nil
	}
	return map[string]any{"type": "Point", "coordinates": []any{-122.4 + r.Float64(), 37.7}}
}

// dualCase is a generated result to create a dual response for.
type dualCase struct {
	budget  int
	spec    dualresp.Spec
	columns []dualresp.Column
	sample  []json.RawMessage // the first rows of the result
	total   int64
}

// genDualCase draws a result: 0..300 sample rows of 1..60 columns whose
// names and values have random lengths, a total at least the sample, a
// name, caller metadata, a sample size and a byte budget (0 = default,
// below the minimum, or 2 KiB..40 KiB). The bulk (rows) comes from a
// generator seeded by rapid, so checks stay cheap and reproducible.
func genDualCase(t *rapid.T, nameUnits []string) dualCase {
	r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 2))
	width := rapid.IntRange(1, 60).Draw(t, "width")
	colLen := rapid.IntRange(0, 40).Draw(t, "column name length")
	cols := make([]dualresp.Column, width)
	for i := range cols {
		cols[i] = dualresp.Column{Name: fmt.Sprintf("c%d_%s", i, strings.Repeat("x", r.IntN(colLen+1))),
			Type: []string{"", "text", "number", "point"}[r.IntN(4)]}
	}
	maxLen := rapid.SampledFrom([]int{10, 200, 5000}).Draw(t, "value length")
	nrows := rapid.IntRange(0, 300).Draw(t, "rows")
	nullShare := rapid.IntRange(0, 3).Draw(t, "absent nulls")
	rows := make([]json.RawMessage, nrows)
	for i := range rows {
		row := map[string]any{}
		for _, c := range cols {
			if v := randValue(r, maxLen); v != nil || r.IntN(4) >= nullShare {
				row[c.Name] = v
			}
		}
		b, err := json.Marshal(row)
		if err != nil {
			t.Fatalf("encoding a generated row: %v", err)
		}
		rows[i] = b
	}
	total := int64(nrows) + rapid.Int64Range(0, 1<<40).Draw(t, "more rows")
	if rapid.Bool().Draw(t, "exact total") {
		total = int64(nrows)
	}
	meta := map[string]any{
		"dataset_id": "abcd-1234",
		"query":      strings.Repeat("SELECT x WHERE y = 'z' ", rapid.IntRange(0, 200).Draw(t, "query length")),
		"note":       randValue(r, maxLen),
	}
	return dualCase{
		budget: rapid.OneOf(rapid.Just(0), rapid.IntRange(0, dualresp.MinByteBudget), rapid.IntRange(2048, 40000)).Draw(t, "ByteBudget"),
		spec: dualresp.Spec{
			Name:       strings.Repeat(rapid.SampledFrom(nameUnits).Draw(t, "name unit"), rapid.IntRange(0, 400).Draw(t, "name length")),
			Query:      dualresp.Query{Kind: "test", Text: "all"},
			Columns:    cols,
			SampleSize: rapid.IntRange(-1, 120).Draw(t, "SampleSize"),
			Metadata:   meta,
		},
		columns: cols,
		sample:  rows,
		total:   total,
	}
}

// effectiveBudget is the budget the Server uses for a configured one.
func effectiveBudget(b int) int {
	if b == 0 {
		return dualresp.DefaultByteBudget
	}
	return max(b, dualresp.MinByteBudget)
}

func newBudgetServer(t *rapid.T, dc dualCase) *dualresp.Server {
	srv, err := dualresp.New(dualresp.Options{
		// One budget for every answer (whole ones may have a larger one:
		// dualresp's TestByteBudgetProperty covers that).
		BaseURL: "http://127.0.0.1:8765", ByteBudget: dc.budget, WholeByteBudget: -1, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"test": &sliceExecutor{rows: dc.sample, total: dc.total}},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return srv
}

func checkPayloadWithinBudget(t *rapid.T, names []string) {
	dc := genDualCase(t, names)
	srv := newBudgetServer(t, dc)
	defer srv.Close()
	resp, err := srv.CreateResponse(context.Background(), dc.spec)
	if err != nil {
		t.Fatalf("CreateResponse: %v", err)
	}
	budget := effectiveBudget(dc.budget)
	sc := resp.StructuredContent()
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatalf("encoding the structured content: %v", err)
	}
	if len(b) > budget {
		t.Fatalf("structured content is %d bytes; budget %d (%d rows of %d columns, name %d bytes)",
			len(b), budget, len(dc.sample), len(dc.columns), len(dc.spec.Name))
	}
	res := mcpgo.CallToolResult(resp)
	b2, err := json.Marshal(res.StructuredContent)
	if err != nil || len(b2) > budget {
		t.Fatalf("CallToolResult structured content is %d bytes (%v); budget %d", len(b2), err, budget)
	}
	content, err := json.Marshal(res.Content)
	if err != nil || len(content)+len(b2) > budget {
		t.Fatalf("CallToolResult content %d + structured content %d bytes (%v); budget %d", len(content), len(b2), err, budget)
	}
	var got struct {
		Results  []json.RawMessage `json:"results"`
		Metadata struct {
			TotalCount  int64 `json:"total_count"`
			SampleCount int   `json:"sample_count"`
			Truncated   bool  `json:"truncated"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("decoding the structured content: %v", err)
	}
	wantMax := len(dc.sample)
	switch ss := dc.spec.SampleSize; {
	case ss < 0:
		wantMax = 0
	case ss == 0:
		wantMax = min(wantMax, dualresp.DefaultSampleSize)
	default:
		wantMax = min(wantMax, ss)
	}
	m := got.Metadata
	if m.TotalCount != dc.total || m.SampleCount != len(got.Results) || len(got.Results) > wantMax ||
		m.Truncated != (int64(len(got.Results)) < m.TotalCount) {
		t.Fatalf("metadata total %d, sample_count %d, truncated %v with %d rows; want total %d, at most %d rows",
			m.TotalCount, m.SampleCount, m.Truncated, len(got.Results), dc.total, wantMax)
	}
}

func columnNames(cols []dualresp.Column) []string {
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	return names
}

// Names of generated results: ordinary ones, and ones made of characters
// that JSON escapes to six bytes each (\u0026, \u003c, \u0002).
var (
	plainNames   = []string{"Trees ", `"q" `, "日本 ", "Food & Drink ", "Tab\tbed "}
	escapedNames = []string{"&", "<", "\x02"}
)
