package socratatest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

type response struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, srv *Server, path string, params url.Values) response {
	t.Helper()
	u := srv.URL() + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", u, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func decodeRows(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal(body, &rows); err != nil {
		t.Fatalf("decoding rows: %v: %.300s", err, body)
	}
	return rows
}
