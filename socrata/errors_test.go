package socrata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// errorLine is one line of testdata/soql/error-responses.jsonl.
type errorLine struct {
	Status       int             `json:"status"`
	Request      string          `json:"request"`
	Body         json.RawMessage `json:"body"`
	BodyFragment json.RawMessage `json:"body_fragment"`
	BodyPrefix   string          `json:"body_prefix"`
	BodyNote     string          `json:"body_note"`
}

// TestRealErrorResponses serves every real Socrata error body of the corpus
// with its status and checks the typed error the client makes of it.
func TestRealErrorResponses(t *testing.T) {
	t.Parallel()
	f, err := os.Open(fixtures.Path(t, "soql", "error-responses.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var line errorLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		// What the client should find, read from the raw body here.
		var body []byte
		var wantCode, wantMsg string
		var wantData map[string]any
		switch {
		case line.Body != nil:
			body = line.Body
		case line.BodyFragment != nil:
			body = line.BodyFragment
		case line.BodyPrefix != "":
			body = []byte(line.BodyPrefix) // truncated JSON, as reported
			wantCode = "query.soql.aggregate-in-ungrouped-context"
			wantMsg = line.BodyPrefix[:40]
		case line.BodyNote != "":
			// The note says what the body carried; rebuild it.
			body = []byte(`{"message":"Invalid SoQL query","errorCode":"query.soql.no-such-column","data":{"column":"bad_col"}}`)
		default:
			t.Fatalf("line %d has no body", n)
		}
		if wantCode == "" {
			var raw map[string]any
			if err := json.Unmarshal(body, &raw); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			wantCode, _ = raw["errorCode"].(string)
			if wantCode == "" {
				wantCode, _ = raw["code"].(string)
			}
			wantMsg, _ = raw["message"].(string)
			wantData, _ = raw["data"].(map[string]any)
		}
		t.Run(fmt.Sprintf("line%02d_%d_%s", n, line.Status, wantCode), func(t *testing.T) {
			t.Parallel()
			c, _, _ := newTestClient(t, serveJSON(line.Status, body), Options{})
			res, err := c.Query(t.Context(), "abcd-1234", "SELECT x")
			if wantCode == "query.soql.no-results" {
				// Socrata's "No results found." is an empty result, not a failure.
				if err != nil || len(res.Rows) != 0 {
					t.Fatalf("Query = %v, %v; want no rows and no error", res, err)
				}
				return
			}
			var api *APIError
			if !errors.As(err, &api) {
				t.Fatalf("Query error = %T %v; want *APIError", err, err)
			}
			if api.StatusCode != line.Status {
				t.Errorf("StatusCode = %d; want %d", api.StatusCode, line.Status)
			}
			if wantCode != "" && api.Code != wantCode {
				t.Errorf("Code = %q; want %q", api.Code, wantCode)
			}
			if wantMsg != "" && !strings.Contains(api.Message, wantMsg) {
				t.Errorf("Message = %q; want it to contain %q", api.Message, wantMsg)
			}
			if api.Message == "" {
				t.Errorf("Message is empty")
			}
			if wantData != nil {
				if diff := cmp.Diff(wantData, api.Data); diff != "" {
					t.Errorf("Data (-want +got):\n%s", diff)
				}
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("HTTP %d", line.Status)) {
				t.Errorf("Error() = %q; want the status in it", msg)
			}
			if wantMsg != "" && !strings.Contains(msg, wantMsg) {
				t.Errorf("Error() = %q; want Socrata's message in it", msg)
			}
			wantNotFound := line.Status == http.StatusNotFound || wantCode == "dataset.missing"
			if got := errors.Is(err, ErrNotFound); got != wantNotFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v; want %v", got, wantNotFound)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 15 {
		t.Errorf("read %d lines; want 15", n)
	}
	t.Logf("real error responses checked: %d", n)
}

// TestShapeRefErrors serves the small real error documents of shape-refs
// from the endpoints they came from.
func TestShapeRefErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file         string
		status       int
		call         string // "schema" (Views API) or "query" (Resource API)
		wantCode     string
		wantMsg      string
		wantNotFound bool
	}{
		{"koop-socrata__seattle__missing-views.json", 404, "schema", "not_found", "Cannot find view with id missing", true},
		{"koop-socrata__seattle__missing-first.json", 404, "query", "not_found", "No service found for this URL.", true},
		{"koop-socrata__seattle__missing-count.json", 404, "query", "dataset.missing", "Not found", true},
		// The same dataset.missing body with another status is still "not found".
		{"koop-socrata__seattle__missing-count.json", 400, "query", "dataset.missing", "Not found", true},
		{"sodapy__403_response.json", 403, "query", "", "You must be logged in to access this resource", false},
		{"sodapy__403_response.json", 403, "schema", "", "You must be logged in to access this resource", false},
		{"koop-socrata__seattle__filtered-count.json", 500, "query", "", "Internal error", false},
		{"koop-socrata__seattle__filtered-first.json", 200, "query", "", "Unrecognized arguments [limit]", false},
		{"koop-socrata__seattle__filtered-first.json", 200, "schema", "", "Unrecognized arguments [limit]", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%s_%d", tt.file, tt.call, tt.status), func(t *testing.T) {
			t.Parallel()
			body := readFile(t, fixtures.Path(t, "shape-refs", tt.file))
			c, _, _ := newTestClient(t, serveJSON(tt.status, body), Options{})
			var err error
			if tt.call == "schema" {
				_, err = c.Schema(t.Context(), "3k2p-39jp")
			} else {
				_, err = c.Query(t.Context(), "3k2p-39jp", "SELECT * LIMIT 1")
			}
			var api *APIError
			if !errors.As(err, &api) {
				t.Fatalf("error = %T %v; want *APIError", err, err)
			}
			if api.StatusCode != tt.status || api.Code != tt.wantCode && tt.wantCode != "" || api.Message != tt.wantMsg {
				t.Errorf("APIError = {%d %q %q}; want {%d %q %q}", api.StatusCode, api.Code, api.Message, tt.status, tt.wantCode, tt.wantMsg)
			}
			if got := errors.Is(err, ErrNotFound); got != tt.wantNotFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v; want %v", got, tt.wantNotFound)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", tt.status)) {
				t.Errorf("Error() = %q; want the status and %q", err, tt.wantMsg)
			}
		})
	}
}

// TestHTMLAndBrokenBodies checks answers that are not the JSON expected.
func TestHTMLAndBrokenBodies(t *testing.T) {
	t.Parallel()
	const page = "<!DOCTYPE html>\n<html><head><title>Site Maintenance</title></head><body>Back soon</body></html>"
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		call        string
		wantCode    string
		wantInMsg   string
	}{
		{"html 200 resource", 200, "text/html; charset=utf-8", page, "query", "html_response", "Site Maintenance"},
		{"html 200 views", 200, "text/html", page, "schema", "html_response", "HTML page, not Socrata's API"},
		{"html 200 catalog", 200, "text/html", page, "search", "html_response", "HTML page, not Socrata's API"},
		{"html labelled json", 200, "application/json", page, "query", "html_response", "Site Maintenance"},
		{"html 500", 500, "text/html", page, "query", "html_response", "HTTP 500"},
		{"html 404 is not 'not found'", 404, "text/html", page, "schema", "html_response", "HTML page"},
		{"empty 200 resource", 200, "application/json", "", "query", "invalid_response", "empty"},
		{"empty 200 views", 200, "application/json", "", "schema", "invalid_response", "empty"},
		{"not json 200", 200, "application/json", "{not json", "schema", "invalid_response", "not the JSON expected"},
		{"wrong shape views", 200, "application/json", `{"columns": 7}`, "schema", "invalid_response", "not the JSON expected"},
		{"discovery error 400", 400, "application/json", `{"error":"Invalid value for limit: -5"}`, "search", "", "Invalid value for limit: -5"},
		{"plain text 400", 400, "text/plain", "bad request, sorry", "query", "", "bad request, sorry"},
		{"array of non-objects", 200, "application/json", `[1,2]`, "query", "invalid_response", "not a JSON object"},
		{"truncated array", 200, "application/json", `[{"a":"1"},{"a":`, "query", "truncated_response", "retry the request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}
			c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{})
			var err error
			switch tt.call {
			case "query":
				_, err = c.Query(t.Context(), "abcd-1234", "SELECT *")
			case "schema":
				_, err = c.Schema(t.Context(), "abcd-1234")
			case "search":
				_, err = c.Search(t.Context(), "trees", 5)
			}
			var api *APIError
			if !errors.As(err, &api) {
				t.Fatalf("error = %T %v; want *APIError", err, err)
			}
			if api.Code != tt.wantCode || api.StatusCode != tt.status {
				t.Errorf("APIError = {%d %q}; want {%d %q}", api.StatusCode, api.Code, tt.status, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("Error() = %q; want it to contain %q", err, tt.wantInMsg)
			}
			if errors.Is(err, ErrNotFound) {
				t.Errorf("errors.Is(err, ErrNotFound) = true; want false")
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 8, 18, 16, 16, 51, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"7", 7 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"-3", 0},
		{"soon", 0},
		{"Mon, 18 Aug 2025 16:17:01 GMT", 10 * time.Second},
		{"Monday, 18-Aug-25 16:17:21 GMT", 30 * time.Second}, // RFC 850
		{"Mon Aug 18 16:16:56 2025", 5 * time.Second},        // ANSI C
		{"Mon, 18 Aug 2025 16:00:00 GMT", 0},                 // in the past
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestAPIErrorIsOnlyNotFound(t *testing.T) {
	t.Parallel()
	e := &APIError{StatusCode: 404}
	if errors.Is(e, errors.New("socrata: not found")) {
		t.Error("an APIError matched an unrelated error with the same text")
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", e), ErrNotFound) {
		t.Error("a wrapped 404 APIError does not match ErrNotFound")
	}
	var b bytes.Buffer
	b.WriteString(e.Error())
	if !strings.Contains(b.String(), "HTTP 404") {
		t.Errorf("Error() = %q; want the status", b.String())
	}
}
