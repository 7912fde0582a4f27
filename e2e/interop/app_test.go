//go:build e2e

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

func TestMain(m *testing.M) {
	// The tests run the Node scripts and read the files of interop/.
	os.Exit(harness.Main(m, "interop", nil))
}

// buildBinary returns the datasf-mcp binary the tests run (harness.Binary).
func buildBinary(t *testing.T) string {
	t.Helper()
	return harness.Binary(t)
}

// needNode returns the node binary, and checks that npm ci installed pkg.
func needNode(t *testing.T, pkg string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the Node test in -short mode")
	}
	return harness.Node(t, pkg)
}

// TestAppInChromium plays an MCP Apps host in headless Chromium
// (app_host.mjs, app_host_page.js): the TypeScript SDK client and the
// ext-apps AppBridge load the result viewer app from the real binary, hand
// it query_datasf results, and check the total, paging through every row
// with result_page, sorting, the chart, the themes and the REST fast path.
// Screenshots go to $DATASF_SCREENSHOT_DIR (a temporary directory when
// unset).
func TestAppInChromium(t *testing.T) {
	node := needNode(t, "@modelcontextprotocol/ext-apps")
	chromium := harness.Chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	bin := buildBinary(t)
	shots := os.Getenv("DATASF_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	cmd := exec.CommandContext(ctx, node, "app_host.mjs", shots, bin, "--offline", "--rest-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium, "DATASF_LOG_LEVEL=warn", "DATASF_CACHE_DIR="+harness.CacheDir(t), "APP_HOST_REST_ARGS=--cors-origins *")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node app_host.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var fig struct {
		Total          int    `json:"total"`
		Sample         int    `json:"sample"`
		RowsPaged      int    `json:"rows_paged"`
		Pages          int    `json:"pages"`
		SortedBy       string `json:"sorted_by"`
		ResultPage     int    `json:"result_page_calls"`
		Groups         int    `json:"groups"`
		ChartBars      int    `json:"chart_bars"`
		PayloadApp     int    `json:"payload_bytes_app_host"`
		PayloadPlain   int    `json:"payload_bytes_plain"`
		RESTSource     string `json:"rest_source"`
		DarkBackground string `json:"dark_background"`
		LinePoints     int    `json:"line_points"`
		LineLabel      string `json:"line_label"`
		MapPoints      int    `json:"map_points"`
		MapAreas       int    `json:"map_areas"`
		PoliceAreas    int    `json:"police_areas"`
		PoliceLabel    string `json:"police_label"`
	}
	if err := json.Unmarshal(out, &fig); err != nil {
		t.Fatalf("app_host output %q: %v", out, err)
	}
	if fig.Total <= 100 || fig.RowsPaged != fig.Total || fig.Pages != (fig.Total+99)/100 || fig.Sample >= fig.Total {
		t.Errorf("figures %+v; want every row of a result larger than a page, in pages of 100, beyond the sample", fig)
	}
	if fig.ResultPage < fig.Pages {
		t.Errorf("%d result_page calls for %d pages; want the pages read through the host", fig.ResultPage, fig.Pages)
	}
	if fig.ChartBars != fig.Groups || fig.Groups == 0 {
		t.Errorf("chart of %d bars for %d groups; want one a group", fig.ChartBars, fig.Groups)
	}
	if fig.PayloadApp != fig.PayloadPlain {
		t.Errorf("query_datasf payload %d bytes for the app host, %d for a client without the extension; want the same", fig.PayloadApp, fig.PayloadPlain)
	}
	if fig.RESTSource != "rest" {
		t.Errorf("with network access the app read pages from %q; want rest", fig.RESTSource)
	}
	if fig.LinePoints == 0 || !strings.HasPrefix(fig.LineLabel, "line chart of n by month, ") || fig.MapPoints == 0 || fig.MapAreas == 0 {
		t.Errorf("figures %+v; want a line of the months, a map of points and one of areas in the app", fig)
	}
	if fig.PoliceAreas == 0 || !strings.HasPrefix(fig.PoliceLabel, fmt.Sprintf("map of n by police_district, %d area", fig.PoliceAreas)) {
		t.Errorf("police districts map: %d areas, %q; want a choropleth of the data's police districts", fig.PoliceAreas, fig.PoliceLabel)
	}
	for _, name := range []string{"app-table.png", "app-last-page.png", "app-chart.png", "app-dark-narrow.png", "app-line.png", "app-map-points.png", "app-map-areas.png", "app-map-police.png"} {
		if st, err := os.Stat(filepath.Join(shots, name)); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s missing or empty: %v", name, err)
		}
	}
	t.Logf("MCP App in Chromium: %s", out)
}

// TestViewerBuildUpToDate rebuilds the result viewer for its two hosts
// (dualresp/viewer/build.mjs, with the ext-apps and esbuild versions of
// package-lock.json) and compares each page with the committed one: the
// REST API's page (dualresp/viewer/view.html) and the MCP App
// (datasf/app/viewer.html).
func TestViewerBuildUpToDate(t *testing.T) {
	node := needNode(t, "esbuild")
	dir := t.TempDir()
	if b, err := exec.CommandContext(t.Context(), node, "../dualresp/viewer/build.mjs", dir).CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, b)
	}
	for _, page := range []string{"dualresp/viewer/view.html", "datasf/app/viewer.html"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what dualresp/viewer/build.mjs builds from its sources; run `node dualresp/viewer/build.mjs` and commit it", page)
		}
	}
}

// TestViewerHostsShareThePage checks that the REST API's viewer page and
// the MCP App are one viewer: the same page around each host's script.
func TestViewerHostsShareThePage(t *testing.T) {
	t.Parallel()
	script := regexp.MustCompile(`(?s)<script>.*?</script>`)
	notice := regexp.MustCompile(`<!-- Built by [^>]*-->`)
	var pages []string
	for _, page := range []string{"dualresp/viewer/view.html", "datasf/app/viewer.html"} {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(script.FindAll(b, -1)); n != 1 || !notice.Match(b) {
			t.Fatalf("%s has %d inline scripts and notice %v; want one script and the build notice", page, n, notice.Match(b))
		}
		pages = append(pages, string(notice.ReplaceAll(script.ReplaceAll(b, []byte("<script>…</script>")), nil)))
	}
	if pages[0] != pages[1] {
		t.Errorf("the viewer page differs between its hosts outside the script:\nREST: %.300s\napp:  %.300s", pages[0], pages[1])
	}
	if !strings.Contains(pages[0], `<table id="rows">`) {
		t.Errorf("the shared page has no result table: %.300s", pages[0])
	}
}

// TestInspectorStrict runs the MCP Inspector CLI's tools/list with
// --strict against the binary, as a client without the Apps extension and
// as one with it (--advertise-apps): no schema errors either way, and only
// the second lists the app-only tool.
func TestInspectorStrict(t *testing.T) {
	node := needNode(t, "@modelcontextprotocol/inspector")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	bin := buildBinary(t)
	launcher := filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	summary := regexp.MustCompile(`(\d+) errors?, (\d+) warnings?`)
	for _, apps := range []bool{false, true} {
		args := []string{launcher, "--cli", "--method", "tools/list", "--strict"}
		if apps {
			args = append(args, "--advertise-apps")
		}
		args = append(args, "--", bin, "--offline", "--rest-addr", "127.0.0.1:0")
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Env = append(os.Environ(), "DATASF_LOG_LEVEL=warn", "DATASF_CACHE_DIR="+t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector --strict (apps %v): %v\n%s", apps, err, stderr.String())
		}
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatalf("inspector output: %v\n%.300s", err, out)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		listed := strings.Contains(","+strings.Join(names, ",")+",", ",result_page,")
		if listed != apps {
			t.Errorf("inspector (apps %v) lists %v; want result_page listed only to an Apps host", apps, names)
		}
		m := summary.FindStringSubmatch(stderr.String())
		if m != nil && m[1] != "0" {
			t.Errorf("inspector --strict (apps %v): %s\n%s", apps, m[0], stderr.String())
		}
		t.Logf("inspector --strict (apps %v): %d tools; %s", apps, len(names), firstOr(m, "no findings"))
	}
}

func firstOr(m []string, def string) string {
	if len(m) == 0 {
		return def
	}
	return m[0]
}
