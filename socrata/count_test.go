package socrata_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Count reads the one row of a count query, and calls any other answer an
// invalid response.
func TestCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       int64
		wantErr    bool
	}{
		{"text number", `[{"count":"487"}]`, 487, false},
		{"JSON number", `[{"count":12}]`, 12, false},
		{"two rows", `[{"count":"1"},{"count":"2"}]`, 0, true},
		{"no count field", `[{"n":"1"}]`, 0, true},
		{"fraction", `[{"count":1.5}]`, 0, true},
		{"negative", `[{"count":"-1"}]`, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(ts.Close)
			c := socrata.NewClient(socrata.Options{BaseURL: ts.URL, MaxRetries: -1})
			n, err := c.Count(t.Context(), "abcd-1234", "SELECT x |> SELECT count(*) AS count")
			var api *socrata.APIError
			switch {
			case tc.wantErr && (!errors.As(err, &api) || api.Code != "invalid_response"):
				t.Errorf("Count of %s = %d, %v; want an *APIError invalid_response", tc.body, n, err)
			case !tc.wantErr && (err != nil || n != tc.want):
				t.Errorf("Count of %s = %d, %v; want %d", tc.body, n, err, tc.want)
			}
		})
	}
}
