package portal

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

const streamRows = 257

// streamExecutor returns an Executor with 50-row pages on a fake portal
// holding dataset abcd-1234 with n = 0 .. streamRows-1 and a label.
func streamExecutor(t *testing.T) (*Executor, *socratatest.Server) {
	t.Helper()
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "abcd-1234", Name: "Stream", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := fake.AddGenerated(t.Context(), schema, streamRows, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("row %03d", i%10)}
	}); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Default: &Target{Client: socrata.NewClient(socrata.Options{BaseURL: fake.URL(), MaxRetries: -1})}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(r, ExecutorOptions{})
	e.stream = streamOptions{pageRows: 50, ahead: streamAhead} // whole 50-row pages, one attempt each
	return e, fake
}

// stored is the dualresp query datasf stores for text on abcd-1234.
func stored(t *testing.T, text string) dualresp.Query {
	t.Helper()
	q, err := soql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return (&Query{Portal: &Target{Configured: true}, DatasetID: "abcd-1234", Tree: q.WithStableOrder()}).Stored()
}

// resolved is the *Query e prepares of q.
func resolved(t *testing.T, e *Executor, q dualresp.Query) *Query {
	t.Helper()
	p, err := e.Prepare(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Query)
}

// streamNs streams req and returns the n of every row.
func streamNs(t *testing.T, e *Executor, q dualresp.Query, req dualresp.PageRequest) []int {
	t.Helper()
	var ns []int
	err := resolved(t, e, q).Stream(t.Context(), req, func(row json.RawMessage) error {
		var r struct {
			N string `json:"n"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		var n int
		if _, err := fmt.Sscan(r.N, &n); err != nil {
			return fmt.Errorf("row %s: %w", row, err)
		}
		ns = append(ns, n)
		return nil
	})
	if err != nil {
		t.Fatalf("Stream(%+v): %v", req, err)
	}
	return ns
}

func span(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestStreamWindows(t *testing.T) {
	t.Parallel()
	e, fake := streamExecutor(t)
	all := stored(t, "SELECT n, label")
	for _, tc := range []struct {
		name string
		req  dualresp.PageRequest
		want []int
		// requests is the exact number of resource requests, or -1 when
		// a prefetch past the end may or may not reach the portal.
		requests int
	}{
		{"exact limit: no request past the end", dualresp.PageRequest{Limit: streamRows}, span(0, streamRows), 6},
		{"limit inside a page", dualresp.PageRequest{Offset: 30, Limit: 100}, span(30, 130), 2},
		{"limit on a page boundary", dualresp.PageRequest{Limit: 100}, span(0, 100), 2},
		{"limit past the end", dualresp.PageRequest{Offset: 250, Limit: 1000}, span(250, streamRows), -1},
		{"no limit", dualresp.PageRequest{}, span(0, streamRows), -1},
		{"offset past the end", dualresp.PageRequest{Offset: 400}, nil, -1},
	} {
		before := fake.RequestCount("resource")
		got := streamNs(t, e, all, tc.req)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: rows %v, want %v", tc.name, got, tc.want)
		}
		n := fake.RequestCount("resource") - before
		// A cancelled prefetch may still reach the portal: at most one more.
		if tc.requests >= 0 && n != tc.requests || tc.requests < 0 && n > (len(tc.want)+49)/50+2 {
			t.Errorf("%s: %d resource requests, want %d", tc.name, n, tc.requests)
		}
	}
}

func TestStreamOrder(t *testing.T) {
	t.Parallel()
	e, _ := streamExecutor(t)
	cols := []dualresp.Column{{Name: "n", Type: "number"}, {Name: "label", Type: "text"}}
	desc := dualresp.Order{Sort: []dualresp.SortField{{Field: "n", Desc: true}}, Columns: cols}
	got := streamNs(t, e, stored(t, "SELECT n, label"), dualresp.PageRequest{Order: desc})
	want := span(0, streamRows)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("sorted by n desc: %v", got)
	}
	// The sort reorders the query's own LIMIT's rows; it never picks others.
	got = streamNs(t, e, stored(t, "SELECT n, label LIMIT 3"), dualresp.PageRequest{Order: desc})
	if !slices.Equal(got, []int{2, 1, 0}) {
		t.Errorf("SELECT n, label LIMIT 3 sorted by n desc: %v, want [2 1 0]", got)
	}
	// Ties on label are broken by the other columns, so pages of any size
	// concatenate to one order.
	byLabel := dualresp.Order{Sort: []dualresp.SortField{{Field: "label"}}, Columns: cols}
	whole := streamNs(t, e, stored(t, "SELECT n, label"), dualresp.PageRequest{Order: byLabel})
	var paged []int
	for off := int64(0); off < streamRows; off += 37 {
		paged = append(paged, streamNs(t, e, stored(t, "SELECT n, label"), dualresp.PageRequest{Offset: off, Limit: 37, Order: byLabel})...)
	}
	if !slices.Equal(whole, paged) || len(whole) != streamRows {
		t.Errorf("sorted by label: whole %v\npaged by 37 %v", whole, paged)
	}
}

func TestStreamStopsAtCallbackError(t *testing.T) {
	t.Parallel()
	e, _ := streamExecutor(t)
	stop := errors.New("enough")
	n := 0
	err := resolved(t, e, stored(t, "SELECT n")).Stream(t.Context(), dualresp.PageRequest{}, func(json.RawMessage) error {
		n++
		if n == 75 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 75 {
		t.Errorf("Stream returned %v after %d rows; want the callback's error after 75", err, n)
	}
	if err := resolved(t, e, stored(t, "SELECT n")).Stream(t.Context(), dualresp.PageRequest{Offset: -1}, func(json.RawMessage) error { return nil }); err == nil {
		t.Error("Stream with offset -1: no error")
	}
}

// TestStreamRequestsAhead: while the first page of a stream is being sent,
// the fetcher reads ahead: two pages wait for the reader and one more is
// held until there is room (and no page past the end is requested).
func TestStreamRequestsAhead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		req      dualresp.PageRequest
		inFlight int // resource requests made while the first row is held
	}{
		{"bounded: three pages ahead", dualresp.PageRequest{Limit: streamRows}, 4},
		{"bounded, two pages in all", dualresp.PageRequest{Limit: 100}, 2},
		{"unbounded: three pages ahead", dualresp.PageRequest{}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, fake := streamExecutor(t)
			seen, rows := -1, 0
			err := resolved(t, e, stored(t, "SELECT n")).Stream(t.Context(), tc.req, func(json.RawMessage) error {
				rows++
				if rows > 1 {
					return nil
				}
				// Wait (a bounded number of times) for the requests made
				// ahead to reach the portal, and a little more for any
				// request beyond them.
				for range 200 {
					if seen = fake.RequestCount("resource"); seen >= tc.inFlight {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				time.Sleep(50 * time.Millisecond)
				seen = fake.RequestCount("resource")
				return nil
			})
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if seen != tc.inFlight {
				t.Errorf("resource requests while the first row was held = %d; want %d", seen, tc.inFlight)
			}
		})
	}
}

// Page reports the result's columns with its rows, from the response
// headers: CreateResponse needs no other request to learn them.
func TestPageReportsColumns(t *testing.T) {
	t.Parallel()
	e, fake := streamExecutor(t)
	before := fake.RequestCount("resource")
	res, err := resolved(t, e, stored(t, "SELECT n, upper(label) AS big WHERE n < 5")).Page(t.Context(), dualresp.PageRequest{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Errorf("Page gave %d rows; want 3", len(res.Rows))
	}
	names := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		names[i] = c.Name
	}
	if !slices.Equal(names, []string{"n", "big"}) || res.Columns[0].Type == "" {
		t.Errorf("Page columns = %+v; want n and big with types", res.Columns)
	}
	if got := fake.RequestCount("resource") - before; got != 1 {
		t.Errorf("Page made %d requests; want 1", got)
	}
}
