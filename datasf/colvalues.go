package datasf

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/expiring"
	"github.com/datasf-mcp/datasf-mcp/internal/hints"

	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Column values in get_schema. For every column its null share, and for
// text columns with few distinct values their most frequent values, so a
// model writes WHERE incident_category = 'Larceny Theft' rather than
// guessing 'LARCENY THEFT'. They come from the Views API's cachedContents
// (socrata.Column.Stats); for a dataset whose document has none, from
// bounded queries made when get_schema asks (one count of every column,
// and one grouped query for each of the first maxValueQueries text
// columns), kept valueStatsTTL long, as long as the schema cache keeps the
// schema.
//
// A text column has "few distinct values" when its top values are all of
// them (the portal keeps 20, so fewer is all) or cover at least half of
// its rows, and its most frequent value is on at least two rows (a column
// of names or ids is left out).
//
// Budget: values and null shares add at most valuesTokenBudget Claude
// tokens to a get_schema answer of up to 30 columns: at most
// maxValueColumns columns show values, at most maxValues each, each cut to
// maxValueLen characters (about 80 x 9 tokens at worst), and a null share
// costs about 6 tokens a column. TestSchemaColumnValues measures it on
// the incidents and film datasets, TestOfflineSchemaValuesTokens on the
// offline incidents, whose ten text columns all have few values.
const (
	maxValueColumns   = 10
	maxValues         = 8
	maxValueLen       = 32
	maxValueQueries   = 6
	valueQueryTimeout = 5 * time.Second
	valueStatsTTL     = schemacache.DefaultTTL
	valueStatsEntries = 256
	valuesTokenBudget = 900
)

// valueStats keeps the statistics computed by queries, by domain and id.
type valueStats = expiring.LRU[string, map[string]*socrata.ColumnStats]

func newValueStats() *valueStats {
	return expiring.New[string, map[string]*socrata.ColumnStats](valueStatsEntries, valueStatsTTL)
}

// hasStats reports whether any column of sc has statistics.
func hasStats(sc *socrata.Schema) bool {
	for _, c := range sc.Columns {
		if c.Stats != nil {
			return true
		}
	}
	return false
}

// queryStats computes column statistics with bounded queries, for a
// dataset whose Views document has none. A failed query means fewer
// statistics, not an error; complete is false then (the answer is not
// worth keeping).
func queryStats(ctx context.Context, client hints.Portal, sc *socrata.Schema) (stats map[string]*socrata.ColumnStats, complete bool) {
	ctx, cancel := context.WithTimeout(ctx, valueQueryTimeout)
	defer cancel()
	out := map[string]*socrata.ColumnStats{}
	if len(sc.Columns) == 0 {
		return out, true
	}
	failed := false
	cols := sc.Columns[:min(len(sc.Columns), 60)]
	var sel strings.Builder
	sel.WriteString("SELECT count(*) AS n")
	for i, c := range cols {
		fmt.Fprintf(&sel, ", count(`%s`) AS c%d", c.FieldName, i)
	}
	res, err := client.Query(ctx, sc.ID, sel.String())
	if err != nil || len(res.Rows) != 1 {
		return out, false
	}
	{
		total := intOf(res.Rows[0]["n"])
		for i, c := range cols {
			nn := intOf(res.Rows[0]["c"+strconv.Itoa(i)])
			out[c.FieldName] = &socrata.ColumnStats{NonNull: nn, Null: total - nn}
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for _, c := range cols {
		if socrata.ColumnType(c.DataType) != "text" || out[c.FieldName] == nil || out[c.FieldName].NonNull == 0 || manyValuesName.MatchString(c.FieldName) {
			continue
		}
		if n++; n > maxValueQueries {
			break
		}
		wg.Go(func() {
			q := fmt.Sprintf("SELECT `%[1]s` AS v, count(*) AS n WHERE `%[1]s` IS NOT NULL GROUP BY `%[1]s` ORDER BY n DESC LIMIT 20", c.FieldName)
			res, err := client.Query(ctx, sc.ID, q)
			if err != nil {
				mu.Lock()
				failed = true
				mu.Unlock()
				return
			}
			var top []socrata.TopValue
			for _, r := range res.Rows {
				if v, ok := r["v"].(string); ok {
					top = append(top, socrata.TopValue{Value: v, Count: intOf(r["n"])})
				}
			}
			mu.Lock()
			out[c.FieldName].Top = top
			mu.Unlock()
		})
	}
	wg.Wait()
	return out, !failed
}

// manyValuesName matches field names of columns that hold a different
// value on most rows (ids, numbers, addresses, free text): no grouped
// query is spent on them.
var manyValuesName = regexp.MustCompile(`(?i)(^|_)(id|uid|key|number|num|no|address|description|notes?|comments?|text|name|location|point|url)$`)

func intOf(v any) int64 {
	switch x := v.(type) {
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	case float64:
		return int64(x)
	}
	return 0
}

// fewValues returns the values to show for a text column with few
// distinct values, most frequent first, or nil.
func fewValues(c socrata.Column, st *socrata.ColumnStats) []string {
	if st == nil || socrata.ColumnType(c.DataType) != "text" || len(st.Top) == 0 || st.Top[0].Count < 2 {
		return nil
	}
	var covered int64
	for _, t := range st.Top {
		covered += t.Count
	}
	if !st.TopIsComplete() && 2*covered < st.NonNull {
		return nil
	}
	var out []string
	for _, t := range st.Top[:min(len(st.Top), maxValues)] {
		out = append(out, clipText(t.Value, maxValueLen))
	}
	return out
}

// nullShare is the share of rows without a value, rounded to 2 decimals.
func nullShare(st *socrata.ColumnStats) *float64 {
	if st == nil || st.Null+st.NonNull == 0 {
		return nil
	}
	v := math.Round(100*float64(st.Null)/float64(st.Null+st.NonNull)) / 100
	return &v
}

// displayNames maps each column's display name to its field name, for the
// correction of a column asked for by the name the portal shows
// ("Category" for service_name).
func displayNames(sc *socrata.Schema) map[string]string {
	out := make(map[string]string, len(sc.Columns))
	for _, c := range sc.Columns {
		if c.Name != "" && c.Name != c.FieldName {
			out[c.Name] = c.FieldName
		}
	}
	return out
}
