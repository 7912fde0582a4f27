package dualresp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// FuzzHandler sends arbitrary requests to the REST handler: it must never
// panic, must answer JSON with a known status, and only PUT and DELETE may
// change the stored record.
func FuzzHandler(f *testing.F) {
	for _, seed := range []struct{ method, target, body string }{
		{"GET", "/resources/ID", ""},
		{"GET", "/resources/ID?offset=10&limit=5", ""},
		{"GET", "/resources/ID?skip=-1", ""},
		{"GET", "/resources/ID?limit=abc", ""},
		{"GET", "/resources/ID?offset=99999999999999999999", ""},
		{"POST", "/resources/ID", `{"offset":0,"limit":3,"sort":{"field":"i","order":"desc"}}`},
		{"POST", "/resources/ID", `{"sort":{"field":"i; DROP TABLE x","order":"asc"}}`},
		{"POST", "/resources/ID", `{"offset":"1"}`},
		{"POST", "/resources/ID", `{"unknown":1}`},
		{"POST", "/resources/ID", `[1,2`},
		{"GET", "/resources/ID/export?format=csv", ""},
		{"GET", "/resources/ID/export?format=xml", ""},
		{"PUT", "/resources/ID", ""},
		{"DELETE", "/resources/ffffffffffffffffffffffffffffffff", ""},
		{"GET", "/resources/../../etc/passwd", ""},
		{"PATCH", "/resources/ID", "x"},
	} {
		f.Add(seed.method, seed.target, seed.body)
	}
	srv, err := dualresp.New(dualresp.Options{BaseURL: "http://example.test", Executors: map[string]dualresp.Executor{"gen": &genExecutor{Total: 40}}, CleanupInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, method, target, body string) {
		resp := create(t, srv, dualresp.Spec{})
		before := resp.Record()
		target = strings.ReplaceAll(target, "ID", resp.ID())
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		switch method {
		case "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH":
		default:
			method = "GET"
		}
		req, err := http.NewRequest(method, "http://example.test"+target, strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200, 204, 400, 401, 404, 405, 413:
		case 301, 307, 308: // net/http's ServeMux cleans unclean paths by redirecting
		default:
			t.Fatalf("%s %s %q: status %d: %s", method, target, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var e struct{ Error, Message string }
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" || e.Message == "" {
				t.Fatalf("%s %s: error answer %q is not {error, message}", method, target, w.Body)
			}
		}
		after, err := srv.Resource(t.Context(), resp.ID())
		if method != "PUT" && method != "DELETE" {
			if err != nil {
				t.Fatalf("%s %s removed the record: %v", method, target, err)
			}
			if after.Pinned != before.Pinned || after.TotalCount != before.TotalCount || after.Query.Text != before.Query.Text {
				t.Fatalf("%s %s changed the record: %+v -> %+v", method, target, before, after)
			}
		}
		_ = srv.Delete(t.Context(), resp.ID())
	})
}

// FuzzParse feeds arbitrary bytes to the client's parser: it must never
// panic, and whatever it accepts must have a resource and a non-negative
// total.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"results":[{"a":1}],"resource":{"uri":"resource://0123456789abcdef0123456789abcdef","url":"http://x/resources/0123456789abcdef0123456789abcdef"},"metadata":{"total_count":5}}`))
	f.Add([]byte(`{"structuredContent":{"results":[],"resource":{"url":"http://h/r/1"},"metadata":{"total_count":"7"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"resource\":{\"uri\":\"resource://ab\"},\"results\":[]}"}]}}`))
	f.Add([]byte(`{"resource":{"uri":""},"results":null}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"metadata":{"total_count":-3},"resource":{"uri":"resource://x"}}`))
	f.Add([]byte{0xff, 0xfe})
	c, err := dualresp.NewClient(dualresp.ClientOptions{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := c.Parse(data)
		if p == nil {
			return
		}
		if p.ResourceURI == "" && p.ResourceURL == "" {
			t.Fatalf("Parse(%q) accepted a response without a resource", data)
		}
		if p.TotalCount < 0 {
			t.Fatalf("Parse(%q) gave a negative total %d", data, p.TotalCount)
		}
		// Parsing the text of a tool result holding the same JSON agrees.
		wrapped, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(data)}}})
		if q := c.Parse(wrapped); q != nil && q.TotalCount != p.TotalCount {
			t.Fatalf("total %d from content text, %d from the JSON itself", q.TotalCount, p.TotalCount)
		}
		_, _ = io.Copy(io.Discard, bytes.NewReader(data))
	})
}
