package dualresp_test

import (
	"encoding/json"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

func TestCreateResponseWithPrecomputedRunsNoQuery(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 1000}
	srv, _ := newServer(t, exec, dualresp.Options{})
	sample := []json.RawMessage{genRow(0), genRow(1), genRow(2), genRow(3)}
	resp := create(t, srv, dualresp.Spec{
		SampleSize:  3,
		Precomputed: &dualresp.Precomputed{TotalCount: 1000, Sample: sample},
	})
	if got := exec.counts.Load() + exec.pages.Load(); got != 0 {
		t.Errorf("executor calls = %d; want 0 with a precomputed count and sample", got)
	}
	rec := resp.Record()
	if rec.TotalCount != 1000 || len(rec.Sample) != 3 {
		t.Errorf("record total %d, sample %d; want 1000 and 3 (the sample size)", rec.TotalCount, len(rec.Sample))
	}
	if _, err := srv.CreateResponse(t.Context(), dualresp.Spec{Precomputed: &dualresp.Precomputed{TotalCount: -1}}); err == nil {
		t.Error("CreateResponse with a negative precomputed count succeeded; want an error")
	}
}
