package dualresp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

func TestServerRows(t *testing.T) {
	t.Parallel()
	const total = 2500
	for _, name := range []string{"paged", "streamed"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gen := &genExecutor{Total: total}
			var exec dualresp.Executor = gen
			var st *streamExecutor
			if name == "streamed" {
				st = &streamExecutor{genExecutor: gen}
				exec = st
			}
			srv, _ := newServer(t, exec, dualresp.Options{})
			rec := create(t, srv, dualresp.Spec{SampleSize: -1}).Record()

			var n int64
			for row, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{PageSize: 700}) {
				if err != nil {
					t.Fatal(err)
				}
				var m struct{ I int64 }
				if err := json.Unmarshal(row, &m); err != nil || m.I != n {
					t.Fatalf("row %d = %s (%v); want i = %d", n, row, err, n)
				}
				n++
			}
			if n != total {
				t.Errorf("Rows gave %d rows; want %d", n, total)
			}
			if st != nil {
				if s, p := st.streams.Load(), gen.pages.Load(); s != 1 || p != 0 {
					t.Errorf("streamed: %d streams, %d pages; want 1 and 0", s, p)
				}
			} else if p := gen.pages.Load(); p != 4 { // 700+700+700+400
				t.Errorf("paged: %d pages; want 4", p)
			}

			// Breaking out stops the requests.
			before := gen.pages.Load()
			for range srv.Rows(t.Context(), rec, dualresp.RowsOptions{PageSize: 700}) {
				break
			}
			if st == nil && gen.pages.Load() != before+1 {
				t.Errorf("after a break: %d more pages; want 1", gen.pages.Load()-before)
			}

			// A canceled context is yielded once, before any request.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			before = gen.pages.Load()
			var errs int
			for _, err := range srv.Rows(ctx, rec, dualresp.RowsOptions{}) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Rows(canceled) yielded %v; want context.Canceled", err)
				}
				errs++
			}
			if errs != 1 || gen.pages.Load() != before {
				t.Errorf("Rows(canceled): %d yields, %d pages; want 1 and 0", errs, gen.pages.Load()-before)
			}
		})
	}
}

func TestServerRowsFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	gen := &genExecutor{Total: 10}
	srv, _ := newServer(t, gen, dualresp.Options{})
	rec := create(t, srv, dualresp.Spec{}).Record()
	gen.PageErr = boom
	var errs int
	for row, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{}) {
		if row != nil || !errors.Is(err, boom) {
			t.Errorf("Rows yielded %s, %v; want nil, boom", row, err)
		}
		errs++
	}
	if errs != 1 {
		t.Errorf("Rows yielded %d errors; want 1", errs)
	}
	rec.Query.Kind = "nope"
	yields := 0
	for _, err := range srv.Rows(t.Context(), rec, dualresp.RowsOptions{}) {
		yields++
		if err == nil {
			t.Error("Rows of an unknown kind yielded a row; want an error")
		}
	}
	if yields != 1 {
		t.Errorf("Rows of an unknown kind yielded %d times; want one error", yields)
	}
}
