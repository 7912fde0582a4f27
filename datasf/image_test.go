package datasf_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// pictureOf returns a result's image (decoded PNG bytes) and its texts.
func pictureOf(res *mcp.CallToolResult) (img []byte, texts []string) {
	for _, c := range res.Content {
		if ic, ok := mcp.AsImageContent(c); ok && ic.MIMEType == "image/png" {
			img, _ = base64.StdEncoding.DecodeString(ic.Data)
		}
		if tc, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, tc.Text)
		}
	}
	return img, texts
}

// TestQueryImage asks query_datasf for the picture of results of each kind
// (image: true) on the larceny fixture: a PNG comes after the answer, with
// a line saying what it shows, drawn from the complete result; without the
// argument the answer has no image and no such line.
func TestQueryImage(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	tests := []struct {
		soql string
		want *regexp.Regexp
	}{
		{"SELECT date_trunc_ymd(incident_date) AS day, count(*) AS n GROUP BY day ORDER BY n DESC",
			regexp.MustCompile(`^The picture: line chart of n by day, (\d+) points from 2018-10-\d\d to 2019-11-\d\d, \d+ gaps with no rows\.$`)},
		{"SELECT incident_category, count(*) AS n GROUP BY incident_category", regexp.MustCompile(`^The picture: bar chart of n by incident_category, 1 bar\.$`)},
		{"SELECT analysis_neighborhood, count(*) AS n GROUP BY analysis_neighborhood", regexp.MustCompile(`^The picture: map of n by analysis_neighborhood, \d+ areas`)},
		{"SELECT incident_id, point LIMIT 300", regexp.MustCompile(`^The picture: map of \d+ points`)},
		{"SELECT incident_id, resolution LIMIT 3", regexp.MustCompile(`^No picture: the result is neither`)},
	}
	for _, tt := range tests {
		args := map[string]any{"dataset_id": "wg3w-h783", "soql": tt.soql, "sample_size": 2}
		plain := h.call(t, "query_datasf", args)
		if img, texts := pictureOf(plain); img != nil || strings.Contains(strings.Join(texts, "\n"), "picture") {
			t.Errorf("%s without image: an image (%d bytes) or a picture line in %q; want neither", tt.soql, len(img), texts)
		}
		args["image"] = true
		res := h.call(t, "query_datasf", args)
		if res.IsError {
			t.Fatalf("%s with image: error %v", tt.soql, res.Content)
		}
		img, texts := pictureOf(res)
		if len(res.Content) != len(plain.Content)+1+boolInt(img != nil) {
			t.Errorf("%s with image: %d content items; want the %d of the answer, the picture's line and its image", tt.soql, len(res.Content), len(plain.Content))
		}
		if last := texts[len(texts)-1]; !tt.want.MatchString(last) {
			t.Errorf("%s with image: last text %q; want %v", tt.soql, last, tt.want)
		}
		// The line has a point a day of the whole result, not of the sample.
		if m := tt.want.FindStringSubmatch(texts[len(texts)-1]); len(m) > 1 {
			sc, _ := res.StructuredContent.(map[string]any)
			md, _ := sc["metadata"].(map[string]any)
			if total, _ := md["total_count"].(float64); m[1] != strconv.Itoa(int(total)) {
				t.Errorf("%s with image: a line of %s points; the result has %v days", tt.soql, m[1], total)
			}
		}
		if strings.HasPrefix(tt.want.String(), "^No picture") {
			continue
		}
		if img == nil {
			t.Fatalf("%s with image: no PNG", tt.soql)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil || cfg.Width != 768 || cfg.Height != 432 {
			t.Errorf("%s with image: PNG %dx%d (%v); want 768x432", tt.soql, cfg.Width, cfg.Height, err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
