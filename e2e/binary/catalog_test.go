//go:build e2e

package binary

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// --catalog reads the gzip-compressed catalog testdata/ ships, and its
// entry for a built-in dataset replaces the built-in made-up description:
// search finds Mobile Food Facility Permit by the catalog's words and
// get_schema describes it as the catalog does.
func TestOfflineCatalogGzip(t *testing.T) {
	t.Parallel()
	root, err := fixtures.Root()
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(root, "catalog", "datasf-catalog-630-with-signals.jsonl.gz")
	const real = "Mobile Food Facility Permits including name of vendor"

	var found struct {
		Results []struct {
			ID          string   `json:"id"`
			Description string   `json:"description"`
			Matched     []string `json:"matched"`
		} `json:"results"`
	}
	offlineJSON(t, &found, "search", "--query", "which food trucks sell tacos", "--catalog", gz)
	if len(found.Results) == 0 || found.Results[0].ID != "rqzj-sfat" {
		t.Fatalf("search with --catalog %s = %+v; want rqzj-sfat first", filepath.Base(gz), found.Results)
	}
	if !strings.HasPrefix(found.Results[0].Description, real) {
		t.Errorf("search: rqzj-sfat's description = %q; want the catalog's (%q…)", found.Results[0].Description, real)
	}

	var schema struct {
		Description string `json:"description"`
	}
	offlineJSON(t, &schema, "schema", "--dataset-id", "rqzj-sfat", "--catalog", gz)
	if !strings.HasPrefix(schema.Description, real) {
		t.Errorf("get_schema rqzj-sfat with --catalog: description = %q; want the catalog's (%q…)", schema.Description, real)
	}
}
