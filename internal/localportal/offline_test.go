package localportal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal/sampledata"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

func ExampleStartOffline() {
	ctx := context.Background()
	p, err := localportal.StartOffline(ctx, localportal.OfflineOptions{SampleScale: 0.001})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	client := socrata.NewClient(socrata.Options{BaseURL: p.URL(), DiscoveryURL: p.URL(), HTTPClient: p.Client()})
	res, err := client.Query(ctx, "yitu-d5am", "SELECT count(*) AS n")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Datasets())
	fmt.Println(res.Rows[0]["n"])
	// Output:
	// [rqzj-sfat vw6y-z8j6 wg3w-h783 yitu-d5am]
	// 2
}

// Files in the data directory replace the sample dataset of the same id.
func TestStartOfflineDataDirWins(t *testing.T) {
	t.Parallel()
	samples := sampledata.Datasets(sampledata.Options{Scale: 0.001})
	id := samples[0].ID
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, id+".csv"), []byte("Incident ID\nfrom-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := localportal.StartOffline(t.Context(), localportal.OfflineOptions{Domain: "data.example.org", DataDir: dir, SampleScale: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var want []string
	for _, d := range samples {
		want = append(want, d.ID)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, p.Datasets()); diff != "" {
		t.Errorf("Datasets() (-want +got):\n%s", diff)
	}
	c := socrata.NewClient(socrata.Options{Domain: "data.example.org", BaseURL: p.URL(), DiscoveryURL: p.URL(), HTTPClient: p.Client()})
	res, err := c.Query(t.Context(), id, "SELECT incident_id")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]socrata.Row{{"incident_id": "from-file"}}, res.Rows); diff != "" {
		t.Errorf("rows of %s (-want +got):\n%s", id, diff)
	}
}

func TestStartOfflineBadCatalog(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	_, err := localportal.StartOffline(t.Context(), localportal.OfflineOptions{Catalog: missing})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("StartOffline(Catalog: missing file) = %v; want an error naming the file", err)
	}
}
