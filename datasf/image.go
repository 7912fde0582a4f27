package datasf

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/picture"
)

// query_datasf's picture (its image argument): the result's chart or map
// as a PNG, for a person in a host that cannot show the result viewer app.
// It is drawn only when asked for, so that the model's answer is unchanged
// otherwise.

// imageAnswer is a tool output that may carry a picture, rendered after
// its content as an image and a line saying what it shows.
type imageAnswer interface {
	picture() (png []byte, text string)
}

func (a queryAnswer) picture() ([]byte, string) { return a.png, a.pictureText }

// withPicture appends out's picture, if it has one, to res.
func withPicture(res *mcp.CallToolResult, out any) *mcp.CallToolResult {
	p, ok := out.(imageAnswer)
	if !ok {
		return res
	}
	png, text := p.picture()
	if text != "" {
		res.Content = append(res.Content, mcp.NewTextContent(text))
	}
	if png != nil {
		res.Content = append(res.Content, mcp.NewImageContent(base64.StdEncoding.EncodeToString(png), "image/png"))
	}
	return res
}

var truncation = regexp.MustCompile(`(?i)date_trunc_(ymd|ym|y)\s*\(`)

// period returns the period of a query's date_trunc_*, when it uses one
// kind only.
func period(query string) string {
	kinds := map[string]bool{}
	for _, m := range truncation.FindAllStringSubmatch(query, -1) {
		kinds[m[1]] = true
	}
	if len(kinds) != 1 {
		return ""
	}
	for k := range kinds {
		return map[string]string{"y": "year", "ym": "month", "ymd": "day"}[k]
	}
	return ""
}

// drawPicture reads the rows a picture of resp needs (a grouped result's
// groups, at most picture.MaxGroups; the first picture.MaxPoints rows with
// points) and draws it. It returns the PNG and a line saying what it shows,
// or nil and why there is none.
func (s *toolServer) drawPicture(ctx context.Context, resp *dualresp.Response, query string) ([]byte, string) {
	const page = 1000
	rec := resp.Record()
	cols := make([]string, len(rec.Columns))
	for i, c := range rec.Columns {
		cols[i] = c.Name
	}
	read := func(from, n int64) ([]map[string]any, error) {
		var rows []map[string]any
		for int64(len(rows)) < n {
			_, p, err := s.results.ReadPage(ctx, resp.ID(), dualresp.PageQuery{Offset: from + int64(len(rows)), Limit: min(page, n-int64(len(rows)))})
			if err != nil {
				return nil, err
			}
			for _, r := range p.Data {
				var m map[string]any
				if err := json.Unmarshal(r, &m); err != nil {
					return nil, err
				}
				rows = append(rows, m)
			}
			if len(p.Data) == 0 {
				break
			}
		}
		return rows, nil
	}
	total := resp.TotalCount()
	rows, err := read(0, min(total, page))
	if err != nil {
		return nil, "No picture: reading the result failed: " + err.Error()
	}
	spec, ok := picture.Choose(cols, rows)
	switch {
	case !ok:
		return nil, "No picture: the result is neither a count or sum by one column nor rows with a point column."
	case spec.Kind == picture.Points && total > int64(len(rows)):
		more, err := read(int64(len(rows)), min(total, picture.MaxPoints)-int64(len(rows)))
		if err != nil {
			return nil, "No picture: reading the result failed: " + err.Error()
		}
		rows = append(rows, more...)
	case spec.Kind != picture.Points && total > picture.MaxGroups:
		return nil, fmt.Sprintf("No picture: %d groups, more than the %d a chart draws.", total, picture.MaxGroups)
	}
	d, err := picture.Draw(spec, rows, period(query))
	if err != nil {
		return nil, "No picture: " + err.Error()
	}
	return d.PNG, "The picture: " + d.Description + "."
}
