package localportal

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// get sends GET path to p with the Host header host ("" for the
// listener's address) and returns the status and body.
func getHost(t *testing.T, p *Emulator, host, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := p.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// A portal serves other domains by Host: each domain's Views and Resource
// APIs answer for its own datasets; the Discovery API answers for all, each
// result with its domain, the domains= filter choosing; the domain list
// counts each domain's datasets.
func TestPortalServesSeveralDomains(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	ctx := t.Context()
	cols := []socrata.Column{{Name: "N", FieldName: "n", DataType: "number"}}
	gen := func(i int) map[string]any { return map[string]any{"n": i} }
	if err := p.AddGenerated(ctx, Schema{ID: "abcd-1234", Name: "Trees of SF", Columns: cols}, 3, gen); err != nil {
		t.Fatal(err)
	}
	chi, err := p.AddDomain("Data.CityOfChicago.org")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.AddDomain("data.cityofchicago.org"); again != chi {
		t.Errorf("AddDomain twice made two portals")
	}
	for _, s := range []Schema{{ID: "abcd-1234", Name: "Trees of Chicago", Columns: cols}, {ID: "wxyz-9876", Name: "Potholes", Columns: cols}} {
		if err := chi.AddGenerated(ctx, s, 7, gen); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.AddDomain("data.sf.gov"); err == nil {
		t.Errorf("AddDomain(its own domain) succeeded; want an error")
	}
	if diff := cmp.Diff([]string{"data.sf.gov", "data.cityofchicago.org"}, p.Domains()); diff != "" {
		t.Errorf("Domains() (-want +got):\n%s", diff)
	}

	count := func(host string) (int, string) {
		status, body := getHost(t, p, host, "/resource/abcd-1234.json?$query="+"SELECT%20count(*)%20AS%20c")
		var rows []map[string]string
		_ = json.Unmarshal(body, &rows)
		if status != http.StatusOK || len(rows) != 1 {
			return status, string(body)
		}
		return status, rows[0]["c"]
	}
	for host, want := range map[string]string{"": "3", "data.sf.gov": "3", "data.cityofchicago.org:443": "7", "DATA.CITYOFCHICAGO.ORG": "7"} {
		if status, got := count(host); status != http.StatusOK || got != want {
			t.Errorf("count of abcd-1234 at Host %q = %d %s; want %s", host, status, got, want)
		}
	}
	if status, _ := getHost(t, p, "data.cityofnewyork.us", "/api/views/abcd-1234.json"); status != http.StatusNotFound {
		t.Errorf("a request for a domain not served: status %d; want 404", status)
	}
	if status, _ := getHost(t, p, "data.sf.gov", "/api/views/wxyz-9876.json"); status != http.StatusNotFound {
		t.Errorf("Chicago's dataset asked of SF: status %d; want 404", status)
	}

	hits := func(query string) map[string][]string {
		_, body := getHost(t, p, "", "/api/catalog/v1?only=dataset"+query)
		var resp struct {
			Results []struct {
				Resource struct {
					ID string `json:"id"`
				} `json:"resource"`
				Metadata struct {
					Domain string `json:"domain"`
				} `json:"metadata"`
				Permalink string `json:"permalink"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, r := range resp.Results {
			out[r.Metadata.Domain] = append(out[r.Metadata.Domain], r.Resource.ID)
			if want := "https://" + r.Metadata.Domain + "/d/" + r.Resource.ID; r.Permalink != want {
				t.Errorf("permalink %q; want %q", r.Permalink, want)
			}
		}
		for _, ids := range out {
			slices.Sort(ids)
		}
		return out
	}
	tests := []struct {
		query string
		want  map[string][]string
	}{
		{"", map[string][]string{"data.sf.gov": {"abcd-1234"}, "data.cityofchicago.org": {"abcd-1234", "wxyz-9876"}}},
		{"&q=trees", map[string][]string{"data.sf.gov": {"abcd-1234"}, "data.cityofchicago.org": {"abcd-1234"}}},
		{"&domains=data.cityofchicago.org", map[string][]string{"data.cityofchicago.org": {"abcd-1234", "wxyz-9876"}}},
		{"&domains=data.sf.gov&search_context=data.sf.gov", map[string][]string{"data.sf.gov": {"abcd-1234"}}},
		{"&domains=data.ny.gov", map[string][]string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, hits(tt.query)); diff != "" {
			t.Errorf("catalog%s by domain (-want +got):\n%s", tt.query, diff)
		}
	}

	_, body := getHost(t, p, "", "/api/catalog/v1/domains")
	var list struct {
		Results []struct {
			Domain string `json:"domain"`
			Count  int    `json:"count"`
		} `json:"results"`
		ResultSetSize int `json:"resultSetSize"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(list)
	if want := `{"results":[{"domain":"data.cityofchicago.org","count":2},{"domain":"data.sf.gov","count":1}],"resultSetSize":2}`; string(got) != want {
		t.Errorf("domains = %s; want %s", got, want)
	}
}

func TestSplitDomainSpec(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string][2]string{
		"data.cityofchicago.org=crimes.csv":           {"data.cityofchicago.org", "crimes.csv"},
		"Data.NY.gov=abcd-1234=/tmp/x.csv":            {"data.ny.gov", "abcd-1234=/tmp/x.csv"},
		"abcd-1234=/tmp/x.csv":                        {"", "abcd-1234=/tmp/x.csv"},
		"/tmp/a=b.csv":                                {"", "/tmp/a=b.csv"},
		"export.csv":                                  {"", "export.csv"},
		"127.0.0.1=x.csv":                             {"", "127.0.0.1=x.csv"},
		"data.cityofchicago.org=":                     {"", "data.cityofchicago.org="},
		`C:\data\x.csv`:                               {"", `C:\data\x.csv`},
		"dir/data.cityofchicago.org=x.csv":            {"", "dir/data.cityofchicago.org=x.csv"},
		"data.cityofchicago.org=ijzp-q8t2=crimes.csv": {"data.cityofchicago.org", "ijzp-q8t2=crimes.csv"},
	} {
		d, rest := SplitDomainSpec(spec)
		if [2]string{d, rest} != want {
			t.Errorf("SplitDomainSpec(%q) = %q, %q; want %q, %q", spec, d, rest, want[0], want[1])
		}
	}
}

// StartOffline places "DOMAIN=ID=FILE" data on that domain.
func TestStartOfflineOtherDomain(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "potholes.csv")
	if err := os.WriteFile(file, []byte("ward,status\n1,Open\n2,Closed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := StartOffline(t.Context(), OfflineOptions{NoCache: true, Strict: true, SampleScale: 0.001,
		Data: []string{"data.cityofchicago.org=wxyz-9876=" + file}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if status, body := getHost(t, p, "data.cityofchicago.org", "/resource/wxyz-9876.json"); status != http.StatusOK || !json.Valid(body) {
		t.Fatalf("the file's dataset on its domain: %d %s", status, body)
	} else {
		var rows []map[string]any
		_ = json.Unmarshal(body, &rows)
		if len(rows) != 2 {
			t.Errorf("rows of wxyz-9876 on data.cityofchicago.org = %d; want 2", len(rows))
		}
	}
	if status, _ := getHost(t, p, "", "/api/views/wxyz-9876.json"); status != http.StatusNotFound {
		t.Errorf("the file's dataset on the default domain: status %d; want 404", status)
	}
}
