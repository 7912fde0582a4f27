package datasf

import (
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Search finds a dataset by a value of its columns once the portal's
// values are gathered: "larceny theft" is in no dataset's words of DataSF's
// catalog, only in the police incident reports' incident_category. The
// values are gathered in the background after the first search, kept on
// disk (0600), and a second server reads them from there without asking
// the portal again.
func TestSearchRanksByColumnValues(t *testing.T) {
	t.Parallel()
	srv := fixtureportal.New(t)
	client := srv.SocrataClient(socrata.Options{})
	dir := t.TempDir() + "/cache"
	clock := &fakeClock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	newIndexes := func() *catalogIndexes {
		c := newCatalogIndexes(slog.New(slog.DiscardHandler))
		c.now = clock.now
		c.values = &searchValues{dir: dir, now: clock.now}
		// The fixtures' datasets with rows, as the offline portal tells
		// them apart: 4 Views requests a gathering instead of 630 (the
		// race tier's longest datasf test when it asked them all;
		// TestSearchValuesPassOverRowlessDatasets tests the filter).
		c.rowless = func(_, id string) bool {
			return !slices.Contains([]string{"wg3w-h783", "rqzj-sfat", "vw6y-z8j6", "yitu-d5am"}, id)
		}
		t.Cleanup(c.close)
		return c
	}
	search := func(c *catalogIndexes, q string) rankedHits {
		t.Helper()
		found, err := c.search(t.Context(), client, "data.sfgov.org", q, 5)
		if err != nil {
			t.Fatal(err)
		}
		return found
	}

	c := newIndexes()
	if before := search(c, "larceny theft"); slices.Contains(ids(before), "wg3w-h783") {
		t.Fatalf("before the values: search(larceny theft) = %v; the test needs a value no catalog text has", ids(before))
	}
	c.bg.Wait()
	views := srv.RequestCount("views")
	if views == 0 {
		t.Fatal("no Views request: the values were not gathered")
	}
	found := search(c, "larceny theft")
	if len(found.hits) == 0 || found.hits[0].ID != "wg3w-h783" {
		t.Fatalf("after the values: search(larceny theft) = %v; want wg3w-h783 first", ids(found))
	}
	why := strings.Join(matchedWords(found.hits[0]), "; ")
	if !strings.Contains(why, "values: Larceny Theft (incident_category)") {
		t.Errorf("wg3w-h783 matched %q; want it to name the value and its column", why)
	}

	// On disk, private, for the next start.
	path := c.values.valuesPath("data.sfgov.org")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v; want 0600", path, st.Mode().Perm())
	}
	var f valuesFile
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &f); err != nil || len(f.Values) == 0 {
		t.Fatalf("%s: %v, %d datasets; want the values", path, err, len(f.Values))
	}
	for id, cols := range f.Values {
		if len(cols) > valueColumns {
			t.Errorf("%s: %d columns kept; want at most %d", id, len(cols), valueColumns)
		}
		for field, vals := range cols {
			if len(vals) > valuesPerColumn {
				t.Errorf("%s.%s: %d values kept; want at most %d", id, field, len(vals), valuesPerColumn)
			}
		}
	}

	// A second server the same day: the values from disk, no Views request.
	c2 := newIndexes()
	if got := search(c2, "larceny theft"); len(got.hits) == 0 || got.hits[0].ID != "wg3w-h783" {
		t.Errorf("second server: search(larceny theft) = %v; want wg3w-h783 first from the values on disk", ids(got))
	}
	c2.bg.Wait()
	if n := srv.RequestCount("views"); n != views {
		t.Errorf("second server: %d Views requests; want none (%d before, %d after)", n-views, views, n)
	}

	// A day later they are gathered again.
	clock.add(valuesTTL + time.Hour)
	c3 := newIndexes()
	search(c3, "larceny theft")
	c3.bg.Wait()
	if n := srv.RequestCount("views"); n == views {
		t.Error("a day later: no Views request; want the values gathered again")
	}
}

// The gathering stops when the server closes: no request after Close.
func TestSearchValuesStopWithTheServer(t *testing.T) {
	t.Parallel()
	srv := fixtureportal.New(t)
	client := srv.SocrataClient(socrata.Options{})
	c := newCatalogIndexes(slog.New(slog.DiscardHandler))
	c.values = &searchValues{now: time.Now}
	if _, err := c.search(t.Context(), client, "data.sfgov.org", "parking", 5); err != nil {
		t.Fatal(err)
	}
	c.close() // cancels the gathering and waits for it
	n := srv.RequestCount("views")
	if n >= 629 {
		t.Logf("the gathering finished before Close (%d Views requests)", n)
	}
	if _, ok := c.values.cached("data.sfgov.org"); ok && n < 629 {
		t.Error("a gathering stopped by Close kept its partial values as if complete")
	}
	if after := srv.RequestCount("views"); after != n {
		t.Errorf("%d Views requests after Close; want none", after-n)
	}
}

// Offline, the gathering asks the Views API only of the datasets the
// portal holds rows of: a catalog entry alone has no values to give, and
// asking the 630 of DataSF's built-in catalog at every start was 630
// requests for nothing.
func TestSearchValuesPassOverRowlessDatasets(t *testing.T) {
	t.Parallel()
	srv := fixtureportal.New(t)
	client := srv.SocrataClient(socrata.Options{})
	c := newCatalogIndexes(slog.New(slog.DiscardHandler))
	c.values = &searchValues{now: time.Now}
	var asked []string
	c.rowless = func(domain, id string) bool {
		asked = append(asked, domain)
		return id != "wg3w-h783"
	}
	t.Cleanup(c.close)
	if _, err := c.search(t.Context(), client, "data.sfgov.org", "larceny theft", 5); err != nil {
		t.Fatal(err)
	}
	c.bg.Wait()
	if n := srv.RequestCount("views"); n != 1 {
		t.Errorf("Views requests: %d; want 1 (wg3w-h783, the one dataset with rows)", n)
	}
	if len(asked) == 0 || asked[0] != "data.sfgov.org" {
		t.Errorf("rowless asked for domains %q; want data.sfgov.org", asked[:min(len(asked), 3)])
	}
	found, err := c.search(t.Context(), client, "data.sfgov.org", "larceny theft", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(found.hits) == 0 || found.hits[0].ID != "wg3w-h783" {
		t.Errorf("after the values: search(larceny theft) = %v; want wg3w-h783 first", ids(found))
	}
}
