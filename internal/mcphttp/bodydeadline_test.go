package mcphttp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestBodyDeadlineSparesLongResponses: the body read deadline ends with the
// body, so a response written long after it (an export, an event stream)
// runs to its end with its request's context alive.
func TestBodyDeadlineSparesLongResponses(t *testing.T) {
	t.Parallel()
	const timeout = 50 * time.Millisecond
	canceled := make(chan bool, 1)
	ts := httptest.NewServer(bodyDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("reading the body: %v", err)
		}
		// Wait, bounded, for the context to end: it must not, though the
		// deadline passes meanwhile; then answer.
		select {
		case <-r.Context().Done():
		case <-time.After(6 * timeout):
		}
		_, _ = io.WriteString(w, "done\n")
		canceled <- r.Context().Err() != nil
	}), timeout))
	defer ts.Close()
	resp, err := http.Post(ts.URL, "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading a response that outlasts the body deadline: %v", err)
	}
	if <-canceled {
		t.Errorf("the request's context was canceled after the body deadline; want it alive (got %q)", body)
	}
}
