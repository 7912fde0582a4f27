package localportal

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SODA3 query API (dev.socrata.com, "Queries using SODA3", "The page
// Option"): POST /api/v3/views/{id}/query.json with a JSON body
//
//	{"query": "SELECT …", "page": {"pageNumber": 1, "pageSize": 100}, "includeSynthetic": false}
//
// answered with the same JSON array of rows, headers and error envelopes as
// the Resource API, from the same SoQL engine. docs/soda3.md says which
// parts follow the documentation and which are our reading of it.

// maxSODA3Body bounds a SODA3 request body.
const maxSODA3Body = 1 << 20

// soda3Options are the request options a SODA3 /query body may hold. Those
// not in soda3Request are accepted and have no effect here.
var soda3Options = map[string]bool{"query": true, "page": true, "parameters": true, "includeSynthetic": true,
	"includeSystem": true, "orderingSpecifier": true, "timeout": true}

// soda3Request is the part of a SODA3 body the portal acts on.
type soda3Request struct {
	Query *string `json:"query"`
	Page  *struct {
		PageNumber *int64 `json:"pageNumber"`
		PageSize   *int64 `json:"pageSize"`
	} `json:"page"`
	IncludeSynthetic *bool `json:"includeSynthetic"`
}

// SODA3Live is how the live SODA3 answers where its documentation is
// silent, as one production caller of data.sf.gov's SODA3 reported it
// (issue 52, 2026-09): an oversized or invalid page is answered HTTP 200
// with a message object instead of rows; some older datasets answer with
// keys cased as the columns' display names (POST_ID for post_id); a field
// the schema lists can be missing from the rows. The zero value is a portal
// that refuses pages over DefaultSODA3MaxPage rows and otherwise answers as
// documented.
type SODA3Live struct {
	// MaxPageSize is the largest page served (0: DefaultSODA3MaxPage;
	// negative: no bound). A larger one is answered HTTP 200 with
	// {"message": …}.
	MaxPageSize int64
	// DisplayNameKeys are the datasets whose SODA3 rows (and X-SODA2-Fields)
	// are keyed by the columns' display names instead of their field names.
	DisplayNameKeys []string
	// Missing maps a dataset to the fields its SODA3 rows leave out (the
	// X-SODA2-Fields header still names them).
	Missing map[string][]string
}

// DefaultSODA3MaxPage is the largest SODA3 page the fake serves by
// default: the production caller "settled on 5,000-row pages".
const DefaultSODA3MaxPage = 5000

// SetSODA3Live sets how SODA3 answers beyond its documentation.
func (s *Emulator) SetSODA3Live(l SODA3Live) { s.soda3Live.Store(&l) }

func (s *Emulator) soda3LiveNow() SODA3Live {
	if l := s.soda3Live.Load(); l != nil {
		return *l
	}
	return SODA3Live{}
}

// SetSODA2Gone makes the portal answer every SODA 2.1 query (/resource)
// as a portal that has retired SODA 2.1: HTTP 410 with an error that names
// the deprecation (soda2GoneBody). Tyler deprecated SODA1 on 2026-10-01
// and will deprecate SODA 2.1 at a date to be announced; the words are
// ours, since no portal has answered so yet.
func (s *Emulator) SetSODA2Gone(gone bool) { s.soda2Gone.Store(gone) }

// soda2GoneBody is the answer of a portal that retired SODA 2.1.
var soda2GoneBody = map[string]any{"code": "gone", "error": true,
	"message": "SODA 2.1 has been deprecated and is no longer available on this site; use SODA3 (/api/v3/views/{id}/query.json) with an application token"}

// SetSODA3 turns the SODA3 query API on (the default) or off. Off, the
// portal answers it as a portal without SODA3 does: 404, "No service found
// for this URL.". SODA 2.1 is served either way.
func (s *Emulator) SetSODA3(on bool) { s.noSODA3.Store(!on) }

// soda3Path returns the dataset id of a SODA3 query path, or false.
func soda3Path(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/api/v3/views/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/query.json")
	return id, ok && !strings.Contains(id, "/")
}

// badSODA3Request is the 400 answer to a body the API cannot use.
func badSODA3Request(msg string) error {
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"code": "invalid_request", "error": true, "message": msg}}
}

func (s *Emulator) serveSODA3(w http.ResponseWriter, r *http.Request) {
	id, ok := soda3Path(r.URL.Path)
	if !ok || s.noSODA3.Load() {
		notFoundService(w)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": true, "message": "Method not allowed"})
		return
	}
	// "Requests must be either authenticated by a user or marked with a
	// valid application token." The refusal is Colorado's, word for word:
	// "SODA3 query without a token returns a JSON authentication_required
	// error" (evidence soda3-token-required).
	if r.Header.Get("X-App-Token") == "" && r.URL.Query().Get("$$app_token") == "" && r.Header.Get("Authorization") == "" {
		writeJSON(w, http.StatusForbidden, map[string]any{"code": "authentication_required", "error": true,
			"message": "This request must be authenticated or have an application token"})
		return
	}
	req, err := readSODA3(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	if !isDatasetID(id) {
		notFoundService(w)
		return
	}
	if req.Page == nil && s.answerPendingCount(w, r, id, func(*dataset) (string, error) { return *req.Query, nil }, true,
		func(ds *dataset) func(*compiled) *compiled { return s.soda3LiveNow().rowKeys(ds, id) }) {
		return
	}
	ds, found, err := s.lookup(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	if !found {
		writeJSON(w, http.StatusNotFound, map[string]any{"code": "not_found", "error": true,
			"message": "Cannot find view with id " + id})
		return
	}
	live := s.soda3LiveNow()
	// Without a page, the query's own LIMIT or SODA's default 1,000 rows;
	// with one, that page of the query's whole result.
	page := live.rowKeys(ds, id)
	if req.Page != nil {
		size, number := *req.Page.PageSize, *req.Page.PageNumber
		if most := cmp.Or(live.MaxPageSize, DefaultSODA3MaxPage); most > 0 && size > most {
			writeJSON(w, http.StatusOK, map[string]any{"message": "Page size " + strconv.FormatInt(size, 10) +
				" is too large; the largest page is " + strconv.FormatInt(most, 10) + " rows"})
			return
		}
		offset := int64(math.MaxInt64)
		if number-1 <= math.MaxInt64/size {
			offset = (number - 1) * size
		}
		keys := page
		page = func(c *compiled) *compiled {
			return keys(&compiled{sql: "SELECT * FROM (" + c.sql + ") LIMIT " + strconv.FormatInt(size, 10) +
				" OFFSET " + strconv.FormatInt(offset, 10), cols: c.cols})
		}
	}
	s.answer(w, r, ds, id, *req.Query, req.Page == nil, page)
}

// rowKeys returns what SODA3 does to the columns of a result of dataset
// id: display-name keys for the datasets of l.DisplayNameKeys, and the
// fields of l.Missing left out of the rows.
func (l SODA3Live) rowKeys(ds *dataset, id string) func(*compiled) *compiled {
	display := slices.Contains(l.DisplayNameKeys, id)
	missing := l.Missing[id]
	return func(c *compiled) *compiled {
		if !display && len(missing) == 0 {
			return c
		}
		cols := slices.Clone(c.cols)
		for i, col := range cols {
			if slices.Contains(missing, col.Name) {
				cols[i].omit = true
			}
			if dc, ok := ds.byKey[fieldKey(col.Name)]; display && ok && dc.Name != "" {
				cols[i].key = dc.Name
			}
		}
		return &compiled{sql: c.sql, cols: cols}
	}
}

// readSODA3 reads and checks a SODA3 request body.
func readSODA3(w http.ResponseWriter, r *http.Request) (*soda3Request, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSODA3Body))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &queryError{status: http.StatusRequestEntityTooLarge, body: map[string]any{
				"code": "invalid_request", "error": true,
				"message": "The request body is larger than " + strconv.Itoa(maxSODA3Body) + " bytes"}}
		}
		return nil, badSODA3Request("The request body could not be read: " + err.Error())
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		return nil, badSODA3Request("The request body must be a JSON object such as " +
			`{"query": "SELECT *", "page": {"pageNumber": 1, "pageSize": 100}}: ` + err.Error())
	}
	var unknown []string
	for k := range keys {
		if !soda3Options[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badSODA3Request("Unrecognized arguments [" + strings.Join(unknown, ", ") + "]")
	}
	var req soda3Request
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, badSODA3Request("The request body has an option of the wrong type: " + err.Error())
	}
	if req.Query == nil || strings.TrimSpace(*req.Query) == "" {
		return nil, badSODA3Request(`The request body has no "query": want the SoQL to run, such as "SELECT *"`)
	}
	if p := req.Page; p != nil {
		if p.PageNumber == nil || p.PageSize == nil || *p.PageNumber < 1 || *p.PageSize < 1 {
			return nil, badSODA3Request(`"page" must hold "pageNumber" (from 1) and "pageSize" (at least 1)`)
		}
	}
	return &req, nil
}
