package dualresp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// plan is a caller's prepared query: its own rows, its own errors.
type plan struct {
	total    int64
	countErr error
	pageErr  error
}

func (p *plan) Count(context.Context) (int64, error) { return p.total, p.countErr }

func (p *plan) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	if p.pageErr != nil {
		return dualresp.PageResult{}, p.pageErr
	}
	var rows []json.RawMessage
	for i := req.Offset; i < min(p.total, req.Offset+req.Limit); i++ {
		rows = append(rows, json.RawMessage(`{"from":"plan"}`))
	}
	return dualresp.PageResult{Rows: rows, Columns: []dualresp.Column{{Name: "from", Type: "text"}}}, nil
}

// A Spec's Plan counts and samples, and the Executor of its query's kind
// prepares nothing; the Query is what is stored; the Plan's errors come
// back wrapped as the Executor's would be, errors.Is and errors.As reaching
// them.
func TestCreateResponseRunsThePlan(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 100}
	srv, _ := newServer(t, exec, dualresp.Options{})
	q := dualresp.Query{Kind: "gen", Text: "stored text", Params: map[string]string{"k": "v"}}
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: q, Plan: &plan{total: 2}, SampleSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.TotalCount(); got != 2 {
		t.Errorf("TotalCount() = %d; want 2, the plan's", got)
	}
	if rec := resp.Record(); len(rec.Sample) != 2 || string(rec.Sample[0]) != `{"from":"plan"}` || rec.Query.Text != "stored text" || rec.Query.Params["k"] != "v" {
		t.Errorf("record = sample %s, query %+v; want the plan's rows and the Spec's query", rec.Sample, rec.Query)
	}
	if n := exec.prepares.Load() + exec.counts.Load() + exec.pages.Load(); n != 0 {
		t.Errorf("the Executor was called %d times; want 0 (the plan ran)", n)
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		plan *plan
		is   func(error) bool
		want string
	}{
		{&plan{total: 1, countErr: boom}, isErr[*dualresp.CountError], "*dualresp.CountError"},
		{&plan{total: 1, pageErr: boom}, isErr[*dualresp.QueryError], "*dualresp.QueryError"},
	} {
		_, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: q, Plan: tc.plan})
		if !errors.Is(err, boom) || !tc.is(err) {
			t.Errorf("CreateResponse with a failing plan = %v (%T); want a %s wrapping the plan's error", err, err, tc.want)
		}
	}
}

// hint is a caller's hint type.
type hint struct {
	Column  string `json:"column"`
	Message string `json:"message"`
}

func (h hint) HintMessage() string { return h.Message }

// WithHints renders hints once, with the rest of the answer: the summary
// (so the text) says them, and the structured content lists them, each as
// its own type encodes; the budget is not spent on them.
func TestWithHints(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 0}, dualresp.Options{ByteBudget: dualresp.MinByteBudget})
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen"}, Metadata: map[string]any{"dataset_id": "abcd-1234"}})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 3*dualresp.MinByteBudget)
	hinted := resp.WithHints(hint{"district", "Try 'Mission'."}, hint{"name", long})
	if resp.WithHints() != resp {
		t.Errorf("WithHints() without hints made a new response")
	}
	st := hinted.StructuredContent()
	wantSummary := "Hints: Try 'Mission'. " + long
	if !strings.HasSuffix(st.Summary, wantSummary) || !strings.HasPrefix(hinted.Text(), st.Summary) {
		t.Errorf("summary %.80q…, text %.80q…; want both to end with the hints", st.Summary, hinted.Text())
	}
	if len(st.Hints) != 2 || string(st.Hints[0]) != `{"column":"district","message":"Try 'Mission'."}` {
		t.Errorf("structured hints = %s; want each hint's JSON", st.Hints)
	}
	if st.Metadata.Extra["dataset_id"] != "abcd-1234" || st.Metadata.MetadataTruncated {
		t.Errorf("metadata %+v; want the caller's metadata kept (hints are outside the budget)", st.Metadata)
	}
	if plain := resp.StructuredContent(); plain.Hints != nil || strings.Contains(plain.Summary, "Hints:") {
		t.Errorf("the response WithHints was called on changed: %+v", plain)
	}
}

// A Spec's Footer ends the text content, after the table, once; the
// structured content and the budget leave it out.
func TestFooter(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 3}, dualresp.Options{})
	const footer = "Data as of 2025-01-01T00:00:00Z. Portal: https://example.org/resource/abcd-1234.json"
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen"}, Footer: footer})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen"}})
	if err != nil {
		t.Fatal(err)
	}
	text := resp.Text()
	if !strings.HasSuffix(text, "\n\n"+footer) || strings.Count(text, footer) != 1 {
		t.Errorf("Text() = %q; want it to end with the footer once, after a blank line", text)
	}
	if strings.Contains(resp.StructuredContent().Summary, footer) || resp.ModelBytes() != plain.ModelBytes() {
		t.Errorf("the footer reached the structured content or the budget: ModelBytes %d, without it %d", resp.ModelBytes(), plain.ModelBytes())
	}
	if resp.WithHints(hint{"c", "m"}).Text() == "" || !strings.HasSuffix(resp.WithHints(hint{"c", "m"}).Text(), footer) {
		t.Errorf("WithHints lost the footer")
	}
}

// A Spec with QueryStated leaves "query" out of the structured content's
// metadata (the caller's metadata states it another way), also after
// WithHints; the record keeps the query for pages and the REST metadata.
func TestQueryStated(t *testing.T) {
	t.Parallel()
	store := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{})
	srv, _ := newServer(t, &genExecutor{Total: 3}, dualresp.Options{Store: store})
	const text = "SELECT a ORDER BY a"
	for _, stated := range []bool{false, true} {
		resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{
			Query:       dualresp.Query{Kind: "gen", Text: text},
			Metadata:    map[string]any{"url": "https://example.org/q?$query=" + text},
			QueryStated: stated,
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*dualresp.Response{"": resp, " after WithHints": resp.WithHints(hint{"c", "m"})} {
			var sc struct{ Metadata map[string]any }
			b, err := json.Marshal(r.StructuredContent())
			if err == nil {
				err = json.Unmarshal(b, &sc)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, has := sc.Metadata["query"]
			if has == stated || (has && got != text) {
				t.Errorf("QueryStated %t%s: metadata.query = %v (present %t); want it present only without QueryStated", stated, name, got, has)
			}
		}
		rec, err := store.Get(t.Context(), resp.ID())
		if err != nil || rec.Query.Text != text {
			t.Errorf("QueryStated %t: stored query %+v, %v; want %q kept", stated, rec, err, text)
		}
	}
}
