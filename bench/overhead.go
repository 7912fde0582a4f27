package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// overheadQuery is a query a model would write, with two misspelt columns for
// the fuzzy correction to fix.
const overheadQuery = "SELECT incident_datetime, incident_categry, police_distrct, resolution WHERE resolution = 'Open or Active' ORDER BY incident_datetime DESC"

// overhead measures part 3: query_datasf latency minus the time the upstream
// spent in its handlers (the union of their intervals, since the count and
// the sample run in parallel), with the schema cached and not, and the
// upstream requests per call.
func overhead(ctx context.Context, cfg config, h *harness, rep *report) error {
	id := datasetID(cfg.OverheadDataset)
	for range cfg.Runs {
		for _, mode := range []string{"warm", "cold"} {
			if mode == "warm" { // fill the schema cache
				if _, err := h.st.query(ctx, id, overheadQuery); err != nil {
					return err
				}
			}
			var over, lat, ups []time.Duration
			var reqs []float64
			for range cfg.OverheadCalls {
				if mode == "cold" {
					h.st.schemas.Invalidate(id)
				}
				before, err := h.upstreamStats(ctx)
				if err != nil {
					return err
				}
				if err := h.resetUpstream(ctx); err != nil {
					return err
				}
				start := time.Now()
				if _, err := h.st.query(ctx, id, overheadQuery); err != nil {
					return err
				}
				d := since(start)
				after, err := h.upstreamStats(ctx)
				if err != nil {
					return err
				}
				up := time.Duration(after.UnionNS)
				lat = append(lat, d)
				ups = append(ups, up)
				over = append(over, d-up)
				reqs = append(reqs, float64(after.Requests-before.Requests))
			}
			rep.add(keyOverhead(mode, "over.p50"), float64(percentile(over, 50)))
			rep.add(keyOverhead(mode, "over.p99"), float64(percentile(over, 99)))
			rep.add(keyOverhead(mode, "lat.p50"), float64(percentile(lat, 50)))
			rep.add(keyOverhead(mode, "lat.p99"), float64(percentile(lat, 99)))
			rep.add(keyOverhead(mode, "up.p50"), float64(percentile(ups, 50)))
			rep.add(keyOverhead(mode, "up.p99"), float64(percentile(ups, 99)))
			rep.add(keyOverhead(mode, "reqs"), mean(reqs))
			rep.add(keyOverhead(mode, "reqs.max"), slices.Max(reqs))
		}
	}
	return roundTrips(ctx, cfg, h, rep)
}

// upstreamLatency is how long the upstream takes for every request while
// roundTrips measures.
const upstreamLatency = 50 * time.Millisecond

// roundTrips measures query_datasf's latency against an upstream that
// answers every request in upstreamLatency, with the schema cached (one
// round: the count and the sample at once) and not (two: the schema, then
// the count and the sample).
func roundTrips(ctx context.Context, cfg config, h *harness, rep *report) error {
	id := datasetID(cfg.OverheadDataset)
	if err := h.setUpstreamLatency(ctx, upstreamLatency); err != nil {
		return err
	}
	defer func() { _ = h.setUpstreamLatency(context.WithoutCancel(ctx), 0) }()
	calls := max(cfg.OverheadCalls/10, 5)
	for _, mode := range []string{"warm", "cold"} {
		if _, err := h.st.query(ctx, id, overheadQuery); err != nil {
			return err
		}
		var lat []time.Duration
		for range calls {
			if mode == "cold" {
				h.st.schemas.Invalidate(id)
			}
			start := time.Now()
			if _, err := h.st.query(ctx, id, overheadQuery); err != nil {
				return err
			}
			lat = append(lat, since(start))
		}
		rep.add(keyOverhead(mode, "rt.p50"), float64(percentile(lat, 50)))
	}
	return nil
}

func keyOverhead(mode, what string) string { return fmt.Sprintf("overhead.%s.%s", mode, what) }

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	rank := (p*len(s) + 99) / 100 // ceil(p/100*n)
	return s[max(rank, 1)-1]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
