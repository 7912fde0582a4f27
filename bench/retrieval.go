package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// retrieval measures part 2: exporting whole results through our REST export
// (served by a fresh export child per run, so its peak RSS is its own)
// against paging the upstream's Resource API directly with the same page
// size. Both are consumed here over loopback HTTP with the same per-row work:
// split the row out and check it is valid JSON.
func retrieval(ctx context.Context, cfg config, h *harness, rep *report, log *slog.Logger) error {
	small, large := cfg.RetrievalSmall, cfg.RetrievalLarge
	sizes := []int{small, large}
	var lastLargeURL string
	for r := range cfg.Runs {
		e, err := startChild(roleExport, []string{envUpstream + "=" + h.up.URL}, time.Minute)
		if err != nil {
			return err
		}
		urls := map[int]string{}
		for _, i := range sizes {
			cr, err := h.createOn(ctx, e, datasetID(i), queryAll)
			if err != nil {
				e.Stop()
				return err
			}
			if cr.TotalCount != int64(cfg.Sizes[i]) {
				e.Stop()
				return fmt.Errorf("export child: total_count %d for %d rows", cr.TotalCount, cfg.Sizes[i])
			}
			urls[i] = cr.URL
		}
		idle, err := readMem(e.PID())
		if err != nil {
			e.Stop()
			return err
		}
		rep.add("rss.idle", float64(idle.HWM))

		ours := func() error {
			for _, i := range sizes {
				n := cfg.Sizes[i]
				start := time.Now()
				rows, bytes, err := h.readExport(ctx, urls[i], validRow)
				d := since(start)
				if err != nil {
					return err
				}
				if rows != int64(n) {
					return fmt.Errorf("export of %d rows returned %d", n, rows)
				}
				m, err := readMem(e.PID())
				if err != nil {
					return err
				}
				rep.add(keyRetrieval(n, "ours"), float64(n)/d.Seconds())
				rep.add(keyRetrieval(n, "ours.mbps"), float64(bytes)/d.Seconds()/1e6)
				rep.add(keyRetrieval(n, "rss"), float64(m.HWM))
				log.Info("export", "run", r+1, "rows", n, "took", d.Round(time.Millisecond), "peak_rss_mib", m.HWM>>20)
			}
			return nil
		}
		baseline := func() error {
			for _, i := range sizes {
				n := cfg.Sizes[i]
				start := time.Now()
				rows, err := h.pageDirect(ctx, datasetID(i), cfg.PageSize)
				d := since(start)
				if err != nil {
					return err
				}
				if rows != int64(n) {
					return fmt.Errorf("paging %d rows returned %d", n, rows)
				}
				rep.add(keyRetrieval(n, "base"), float64(n)/d.Seconds())
				log.Info("direct paging", "run", r+1, "rows", n, "took", d.Round(time.Millisecond))
			}
			return nil
		}
		first, second := ours, baseline
		if r%2 == 1 {
			first, second = baseline, ours
		}
		err = first()
		if err == nil {
			err = second()
		}
		if err != nil {
			e.Stop()
			return err
		}
		if r == cfg.Runs-1 && cfg.ProfileDir != "" {
			lastLargeURL = urls[large]
			err = profileExport(ctx, cfg, h, e, lastLargeURL, rep, log)
		}
		e.Stop()
		if err != nil {
			return err
		}
	}
	return nil
}

func keyRetrieval(n int, what string) string { return fmt.Sprintf("retrieval.%d.%s", n, what) }

// validRow is the consumer's per-row work for our export.
func validRow(row []byte) error {
	if !json.Valid(row) {
		return fmt.Errorf("export row is not valid JSON: %.80s", row)
	}
	return nil
}

// pageDirect pages through the upstream's Resource API as an application
// would without us: the stable query with LIMIT/OFFSET inside the SoQL, the
// same page size as our export, rows read with the socrata client's
// pass-through row reader (which checks each row is a JSON object).
func (h *harness) pageDirect(ctx context.Context, id string, pageSize int) (int64, error) {
	var total int64
	for off := 0; ; off += pageSize {
		s, err := h.st.svc.SocrataClient().QueryStream(ctx, id, fmt.Sprintf("SELECT * ORDER BY :id ASC LIMIT %d OFFSET %d", pageSize, off))
		if err != nil {
			return total, err
		}
		n := 0
		for {
			_, err := s.NextRaw()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				s.Close()
				return total, err
			}
			n++
		}
		if err := s.Close(); err != nil {
			return total, err
		}
		total += int64(n)
		if n < pageSize {
			return total, nil
		}
	}
}

// profileExport runs one more large export while taking CPU profiles of the
// export child and the upstream, and writes them to cfg.ProfileDir.
func profileExport(ctx context.Context, cfg config, h *harness, e *child, resURL string, rep *report, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
		return err
	}
	n := cfg.Sizes[cfg.RetrievalLarge]
	secs := int(float64(n)/median(rep.samples[keyRetrieval(n, "ours")])) + 1
	type prof struct {
		name string
		err  error
	}
	results := make(chan prof, 2)
	for name, base := range map[string]string{"export-child": e.URL, "upstream": h.up.URL} {
		go func() {
			path := filepath.Join(cfg.ProfileDir, name+".pprof")
			results <- prof{path, h.download(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs), path)}
		}()
	}
	// Let the profilers start before the export.
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if _, _, err := h.readExport(ctx, resURL, validRow); err != nil {
		return err
	}
	log.Info("profiled export", "rows", n, "took", since(start).Round(time.Millisecond), "seconds_profiled", secs)
	for range 2 {
		p := <-results
		if p.err != nil {
			return p.err
		}
		log.Info("wrote profile", "file", p.name)
	}
	return nil
}

func (h *harness) download(ctx context.Context, u, path string) error {
	resp, err := h.get(ctx, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
