package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// queryAll is the query of part 1 and part 2: every row, every column.
const queryAll = "SELECT *"

// firstIncidentID is the incident_id of generated row 0 (snapshot: 600000+i).
const firstIncidentID = 600_000

// payload measures part 1: what query_datasf hands the model, against the
// baseline of returning up to cfg.Inline rows inline, and checks in the first
// run that every row is retrievable through the link.
func payload(ctx context.Context, cfg config, h *harness, rep *report, log *slog.Logger) error {
	inline := make([][]json.RawMessage, len(cfg.Sizes))
	for i, n := range cfg.Sizes {
		rows, err := h.fetchRows(ctx, datasetID(i), min(n, cfg.Inline))
		if err != nil {
			return err
		}
		inline[i] = rows
	}
	for r := range cfg.Runs {
		for i, n := range cfg.Sizes {
			res, err := h.st.query(ctx, datasetID(i), queryAll)
			if err != nil {
				return err
			}
			sc, err := json.Marshal(res.StructuredContent)
			if err != nil {
				return err
			}
			whole, err := json.Marshal(res)
			if err != nil {
				return err
			}
			// The baseline tool result: the rows as structuredContent, and
			// the same JSON as text (mcp-go's NewToolResultStructuredOnly,
			// what the MCP spec recommends for backwards compatibility).
			base := mcp.NewToolResultStructuredOnly(map[string]any{"results": inline[i]})
			bsc, err := json.Marshal(base.StructuredContent)
			if err != nil {
				return err
			}
			bwhole, err := json.Marshal(base)
			if err != nil {
				return err
			}
			rep.add(keyPayload(n, "sc"), float64(len(sc)))
			rep.add(keyPayload(n, "whole"), float64(len(whole)))
			rep.add(keyPayload(n, "sc.base"), float64(len(bsc)))
			rep.add(keyPayload(n, "whole.base"), float64(len(bwhole)))
			if r > 0 {
				continue
			}
			p := dualresp.Parse(res)
			if p == nil {
				return fmt.Errorf("query_datasf on %d rows: the result is not a dual response", n)
			}
			if p.TotalCount != int64(n) {
				return fmt.Errorf("query_datasf on %d rows: total_count %d", n, p.TotalCount)
			}
			var v verification
			if i == len(cfg.Sizes)-1 {
				v, err = h.verifyExport(ctx, p.ResourceURL, n)
			} else {
				v, err = h.verifyPaged(ctx, p.ResourceURL, n, cfg.RESTPage)
			}
			if err != nil {
				return fmt.Errorf("retrieving the %d rows through %s: %w", n, p.ResourceURL, err)
			}
			rep.verified[n] = v
			log.Info("payload", "rows", n, "structured_bytes", len(sc), "whole_bytes", len(whole),
				"baseline_whole_bytes", len(bwhole), "retrieved", v.Distinct, "via", v.Via)
		}
	}
	return lean(ctx, cfg, h, rep)
}

func keyPayload(n int, what string) string { return fmt.Sprintf("payload.%d.%s", n, what) }

// fetchRows reads the first k rows of a dataset from the upstream directly,
// in the stable order.
func (h *harness) fetchRows(ctx context.Context, id string, k int) ([]json.RawMessage, error) {
	s, err := h.st.svc.SocrataClient().QueryStream(ctx, id, fmt.Sprintf("SELECT * ORDER BY :id LIMIT %d", k))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var rows []json.RawMessage
	for {
		raw, err := s.NextRaw()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, raw)
	}
}

// verification is what reading a full result through its link found.
type verification struct {
	Rows     int64  // rows read
	Distinct int64  // distinct generated rows among them
	Want     int64  // rows in the dataset
	Via      string // "pages" or "export"
}

// OK reports whether every row came back exactly once.
func (v verification) OK() bool { return v.Rows == v.Want && v.Distinct == v.Want }

// idSet records which generated rows were seen, by incident_id.
type idSet struct {
	bits     []uint64
	n        int64
	distinct int64
}

func newIDSet(n int) *idSet { return &idSet{bits: make([]uint64, n/64+1), n: int64(n)} }

// add records the row whose JSON is row; it fails when the row has no
// incident_id of a generated row.
func (s *idSet) add(row []byte) error {
	const key = `"incident_id":"`
	i := bytes.Index(row, []byte(key))
	if i < 0 {
		return fmt.Errorf("row without incident_id: %.80s", row)
	}
	rest := row[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return fmt.Errorf("row with a broken incident_id: %.80s", row)
	}
	id, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	idx := id - firstIncidentID
	if err != nil || idx < 0 || idx >= s.n {
		return fmt.Errorf("row with an incident_id %q outside the dataset", rest[:j])
	}
	if s.bits[idx/64]&(1<<(idx%64)) == 0 {
		s.bits[idx/64] |= 1 << (idx % 64)
		s.distinct++
	}
	return nil
}

// verifyPaged pages through the REST endpoint (GET url?offset=&limit=).
func (h *harness) verifyPaged(ctx context.Context, resURL string, n, limit int) (verification, error) {
	v := verification{Want: int64(n), Via: "pages"}
	set := newIDSet(n)
	for off := int64(0); ; {
		var page struct {
			Data       []json.RawMessage `json:"data"`
			HasNext    bool              `json:"has_next"`
			NextOffset int64             `json:"next_offset"`
		}
		u := resURL + "?" + url.Values{"offset": {fmt.Sprint(off)}, "limit": {fmt.Sprint(limit)}}.Encode()
		if err := h.getJSON(ctx, u, &page); err != nil {
			return v, err
		}
		for _, row := range page.Data {
			if err := set.add(row); err != nil {
				return v, err
			}
		}
		v.Rows += int64(len(page.Data))
		if !page.HasNext {
			break
		}
		if page.NextOffset <= off {
			return v, fmt.Errorf("page at offset %d says next_offset %d", off, page.NextOffset)
		}
		off = page.NextOffset
	}
	v.Distinct = set.distinct
	return v, nil
}

// verifyExport reads the NDJSON export and checks every row.
func (h *harness) verifyExport(ctx context.Context, resURL string, n int) (verification, error) {
	v := verification{Want: int64(n), Via: "export"}
	set := newIDSet(n)
	rows, _, err := h.readExport(ctx, resURL, set.add)
	v.Rows, v.Distinct = rows, set.distinct
	return v, err
}

// readExport streams GET {resURL}/export?format=ndjson and calls fn with
// each line (valid only during the call). It returns the rows and bytes read.
func (h *harness) readExport(ctx context.Context, resURL string, fn func([]byte) error) (rows, n int64, err error) {
	resp, err := h.get(ctx, resURL+"/export?format=ndjson")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		n += int64(len(line))
		if len(line) > 0 && line[len(line)-1] == '\n' {
			rows++
			if ferr := fn(line[:len(line)-1]); ferr != nil {
				return rows, n, ferr
			}
		}
		if errors.Is(err, io.EOF) {
			if len(line) > 0 && line[len(line)-1] != '\n' {
				return rows, n, errors.New("export ends with a partial line")
			}
			return rows, n, nil
		}
		if err != nil {
			return rows, n, err
		}
	}
}
