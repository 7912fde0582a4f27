package properties_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/schemacache"
)

// genSearchQuery draws search texts: catalog title words, several of them,
// in other cases, and words no dataset has.
func genSearchQuery(e *env) *rapid.Generator[string] {
	word := rapid.OneOf(rapid.SampledFrom(e.words), rapid.StringMatching(`[a-z]{3,9}`))
	return rapid.Custom(func(t *rapid.T) string {
		ws := rapid.SliceOfN(word, 1, 3).Draw(t, "words")
		q := strings.Join(ws, " ")
		if rapid.Bool().Draw(t, "upper") {
			q = strings.ToUpper(q)
		}
		return q
	})
}

// Properties 1 and 2: every search result has a non-empty id and name and a
// description field (possibly empty text), and there are never more results
// than the requested limit (the default 5 when none is given).
func TestSearchResults(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	var nonEmpty int
	rapid.Check(t, func(t *rapid.T) {
		q := genSearchQuery(e).Draw(t, "query")
		args := map[string]any{"query": q}
		limit := 5
		if rapid.Bool().Draw(t, "give limit") {
			limit = rapid.IntRange(1, 20).Draw(t, "limit")
			args["limit"] = limit
		}
		if rapid.Bool().Draw(t, "json format") {
			args["format"] = "json"
		}
		res, err := e.call(t.Context(), "search_datasf", args)
		if err != nil {
			t.Fatalf("search_datasf(%v): %v", args, err)
		}
		sc := structuredOf(t, fmt.Sprintf("search_datasf(%v)", args), res)
		items, ok := sc["results"].([]any)
		if !ok {
			t.Fatalf("search_datasf(%v): results is %T, want an array", args, sc["results"])
		}
		if len(items) > limit {
			t.Fatalf("search_datasf(%v) returned %d results; limit %d", args, len(items), limit)
		}
		if len(items) > 0 {
			nonEmpty++
		}
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				t.Fatalf("search_datasf(%v): result %d is %T, want an object", args, i, it)
			}
			for _, k := range []string{"id", "name"} {
				if s, _ := m[k].(string); s == "" {
					t.Fatalf("search_datasf(%v): result %d has %s %#v; want non-empty text", args, i, k, m[k])
				}
			}
			if _, ok := m["description"].(string); !ok {
				t.Fatalf("search_datasf(%v): result %d has description %#v; want a text field (possibly empty)", args, i, m["description"])
			}
		}
	})
	t.Logf("searches with at least one result: %d", nonEmpty)
}

// allDatasetIDs lists the catalog's datasets and the loaded ones whose ids
// have the 4x4 shape (the catalog fixture has one entry, facebook_ad_library,
// that does not).
func allDatasetIDs(e *env) []string {
	var ids []string
	for _, id := range append(append([]string(nil), e.catalogIDs...), e.fake.Datasets()...) {
		if fourByFour.MatchString(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Property 3: every schema column has a non-empty name, fieldName and
// dataType, for any dataset of the portal.
func TestSchemaColumns(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	ids := allDatasetIDs(e)
	var columns int
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.SampledFrom(ids).Draw(t, "dataset")
		res, err := e.call(t.Context(), "get_schema", map[string]any{"dataset_id": id})
		if err != nil {
			t.Fatalf("get_schema(%s): %v", id, err)
		}
		sc := structuredOf(t, "get_schema("+id+")", res)
		cols, ok := sc["columns"].([]any)
		if !ok {
			t.Fatalf("get_schema(%s): columns is %T, want an array", id, sc["columns"])
		}
		for i, c := range cols {
			m, _ := c.(map[string]any)
			for _, k := range []string{"name", "fieldName", "dataType"} {
				if s, _ := m[k].(string); s == "" {
					t.Fatalf("get_schema(%s): column %d has %s %#v; want non-empty text (column %v)", id, i, k, m[k], m)
				}
			}
		}
		columns += len(cols)
	})
	t.Logf("columns checked: %d", columns)
}

// Property 5: after a schema is fetched, cache lookups return an equal schema
// (equal to what the portal serves) and say they came from the cache, until
// the TTL expires or the entry is invalidated. A lookup that starts more than
// the TTL after the fetch finished is never answered from the cache. (TTLs
// are short or the default; the test never sleeps.)
func TestSchemaCacheEqual(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	ids := allDatasetIDs(e)
	ids = ids[len(ids)-30:] // the loaded datasets and some catalog entries
	// The portal's answer for each dataset, fetched without the cache. The
	// fake creates a catalog entry's empty table on its first query, which
	// sets its rowsUpdatedAt: fetch once before to settle it.
	direct := map[string]any{}
	for _, id := range ids {
		var ds any
		for range 2 {
			s, err := e.client.Schema(t.Context(), id)
			if err != nil {
				t.Fatalf("client.Schema(%s) = %v", id, err)
			}
			ds = canon(s)
		}
		direct[id] = ds
	}
	// The caches are made once and each check starts by invalidating
	// every entry.
	type cacheCase struct {
		c   *schemacache.Cache
		ttl time.Duration
	}
	caches := []cacheCase{
		{schemacache.New(e.client, schemacache.Options{TTL: 20 * time.Millisecond, Size: 2}), 20 * time.Millisecond},
		{schemacache.New(e.client, schemacache.Options{TTL: time.Hour, Size: 4}), time.Hour},
		{schemacache.New(e.client, schemacache.Options{}), schemacache.DefaultTTL},
	}
	var hits int
	rapid.Check(t, func(t *rapid.T) {
		cc := rapid.SampledFrom(caches).Draw(t, "cache")
		c, effTTL := cc.c, cc.ttl
		for _, id := range ids {
			c.Invalidate(id)
		}
		fetchedAt := map[string]time.Time{} // when the last miss finished
		for range rapid.IntRange(1, 8).Draw(t, "lookups") {
			id := rapid.SampledFrom(ids).Draw(t, "dataset")
			if rapid.IntRange(0, 5).Draw(t, "invalidate") == 0 {
				c.Invalidate(id)
				delete(fetchedAt, id)
				continue
			}
			start := time.Now()
			s, cached, err := c.Schema(t.Context(), id)
			if err != nil {
				t.Fatalf("Schema(%s) = %v", id, err)
			}
			if cached {
				hits++
				at, ok := fetchedAt[id]
				if !ok {
					t.Fatalf("Schema(%s) came from the cache, but it was never fetched (or was invalidated)", id)
				}
				if start.Sub(at) > effTTL {
					t.Fatalf("Schema(%s) came from the cache %v after its fetch; TTL %v", id, start.Sub(at), effTTL)
				}
			} else {
				fetchedAt[id] = time.Now()
			}
			if d := cmp.Diff(direct[id], canon(s)); d != "" {
				t.Fatalf("Schema(%s) (cached %v) differs from the portal's (-portal +cache):\n%s", id, cached, d)
			}
		}
	})
	t.Logf("answers from the cache: %d", hits)
}

// genPeopleQuery draws SoQL over the generated people dataset: a selection
// (all columns, some, or a grouped count), a WHERE over its columns, an
// optional ORDER BY and LIMIT.
func genPeopleQuery(t *rapid.T) string {
	var b strings.Builder
	grouped := rapid.IntRange(0, 4).Draw(t, "grouped") == 0
	switch {
	case grouped:
		b.WriteString("SELECT name, count(*) AS c")
	case rapid.Bool().Draw(t, "star"):
		b.WriteString("SELECT *")
	default:
		cols := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"n", "name", "score", "flag", "day", "note"}), 1, 6, func(s string) string { return s }).Draw(t, "columns")
		b.WriteString("SELECT " + strings.Join(cols, ", "))
	}
	conds := []string{
		fmt.Sprintf("n < %d", rapid.IntRange(0, peopleRows).Draw(t, "n bound")),
		fmt.Sprintf("score >= %d", rapid.IntRange(0, 100).Draw(t, "score bound")),
		"name IS NOT NULL", "name = 'ada'", "flag = true", "note IS NULL",
		"day > '2024-01-20T00:00:00'", "name IN ('bob', 'eve', 'zoë')",
	}
	if rapid.Bool().Draw(t, "where") {
		b.WriteString(" WHERE " + rapid.SampledFrom(conds).Draw(t, "cond"))
		if rapid.Bool().Draw(t, "more") {
			b.WriteString(rapid.SampledFrom([]string{" AND ", " OR "}).Draw(t, "op") + rapid.SampledFrom(conds).Draw(t, "cond2"))
		}
	}
	if grouped {
		b.WriteString(" GROUP BY name")
	}
	if rapid.Bool().Draw(t, "order") {
		if grouped {
			b.WriteString(" ORDER BY c DESC")
		} else {
			b.WriteString(" ORDER BY " + rapid.SampledFrom([]string{"score", "name DESC", "day", "flag"}).Draw(t, "order by"))
		}
	}
	if rapid.Bool().Draw(t, "limit") {
		fmt.Fprintf(&b, " LIMIT %d", rapid.IntRange(0, 500).Draw(t, "limit n"))
	}
	return b.String()
}

// queryCase runs a generated query through query_datasf with a random
// sample size and returns the structured content (as JSON values), the
// parsed dual response and the sample size asked for.
func queryCase(t *rapid.T, e *env) (q string, sc map[string]any, parsed *dualresp.Parsed, sampleSize int) {
	q = genPeopleQuery(t)
	args := map[string]any{"dataset_id": peopleID, "soql": q}
	sampleSize = 15
	if rapid.Bool().Draw(t, "give sample_size") {
		sampleSize = rapid.IntRange(1, 100).Draw(t, "sample_size")
		args["sample_size"] = sampleSize
	}
	res, err := e.call(t.Context(), "query_datasf", args)
	if err != nil {
		t.Fatalf("query_datasf(%v): %v", args, err)
	}
	sc = structuredOf(t, fmt.Sprintf("query_datasf(%v)", args), res)
	parsed = dualresp.Parse(res)
	if parsed == nil {
		t.Fatalf("query_datasf(%v): not a dual response", args)
	}
	return q, sc, parsed, sampleSize
}

// Property 6: every successful query returns an array (results) whose
// elements are JSON objects.
func TestQueryResultsAreObjects(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	rapid.Check(t, func(t *rapid.T) {
		q, sc, _, _ := queryCase(t, e)
		items, ok := sc["results"].([]any)
		if !ok {
			t.Fatalf("query_datasf(%q): results is %T, want an array", q, sc["results"])
		}
		for i, it := range items {
			if _, ok := it.(map[string]any); !ok {
				t.Fatalf("query_datasf(%q): results[%d] is %T (%v), want a JSON object", q, i, it, it)
			}
		}
	})
}

// Property 7: when a result has more rows than the sample size, truncated is
// true and the sample has exactly the sample size, unless the byte budget
// rule reduced it; the byte budget rule: the structured content's JSON is at
// most dualresp.DefaultByteBudget bytes, and a sample with fewer rows than
// min(total, sample size) is marked sample_reduced (at most
// dualresp.DefaultWholeByteBudget when the sample asked is the whole result). sample_count always
// counts the rows shown and total_count is the exact total.
func TestQuerySampleSize(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	var reduced, truncated int
	rapid.Check(t, func(t *rapid.T) {
		q, sc, parsed, size := queryCase(t, e)
		b, _ := json.Marshal(sc)
		meta, _ := sc["metadata"].(map[string]any)
		total := parsed.TotalCount
		budget := dualresp.DefaultByteBudget
		if int64(size) >= total {
			budget = dualresp.DefaultWholeByteBudget // the sample asked is the whole result
		}
		if len(b) > budget {
			t.Fatalf("query_datasf(%q, sample %d of %d): structured content is %d bytes; budget %d", q, size, total, len(b), budget)
		}
		items, _ := sc["results"].([]any)
		n := int64(len(items))
		if got, _ := meta["sample_count"].(float64); int64(got) != n {
			t.Fatalf("query_datasf(%q): sample_count %v with %d rows", q, meta["sample_count"], n)
		}
		isReduced, _ := meta["sample_reduced"].(bool)
		isTruncated, _ := meta["truncated"].(bool)
		want := min(total, int64(size))
		switch {
		case n > want:
			t.Fatalf("query_datasf(%q, sample %d): %d sample rows of %d; want at most %d", q, size, n, total, want)
		case n < want && !isReduced:
			t.Fatalf("query_datasf(%q, sample %d): %d sample rows of %d, not marked sample_reduced; want %d", q, size, n, total, want)
		case total > int64(size) && !isTruncated:
			t.Fatalf("query_datasf(%q, sample %d): %d rows but truncated is false", q, size, total)
		case isTruncated != (n < total):
			t.Fatalf("query_datasf(%q): truncated %v with %d of %d rows", q, isTruncated, n, total)
		}
		if isReduced {
			reduced++
		}
		if isTruncated {
			truncated++
		}
		// total_count is exact: count the rows directly.
		rows, err := parsed.FetchAll(t.Context(), dualresp.FetchAllOptions{PageSize: 1000})
		if err != nil {
			t.Fatalf("FetchAll(%q): %v", q, err)
		}
		if int64(len(rows)) != total {
			t.Fatalf("query_datasf(%q): total_count %d; the full result has %d rows", q, total, len(rows))
		}
	})
	t.Logf("truncated samples: %d; reduced by the byte budget: %d", truncated, reduced)
}

// Property D2: the sample is a prefix of the full result in the stored
// order (a value cut by the byte budget ends in the truncation mark and is
// a prefix of the full value).
func TestSampleIsPrefix(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	rapid.Check(t, func(t *rapid.T) {
		q, _, parsed, _ := queryCase(t, e)
		page, err := parsed.Fetch(t.Context(), dualresp.FetchOptions{Offset: 0, Limit: int64(max(len(parsed.Sample), 1))})
		if err != nil {
			t.Fatalf("Fetch(%q): %v", q, err)
		}
		if len(page.Data) < len(parsed.Sample) {
			t.Fatalf("query_datasf(%q): sample of %d rows; the full result starts with only %d", q, len(parsed.Sample), len(page.Data))
		}
		for i, s := range parsed.Sample {
			want, _ := page.Data[i].Map()
			got, _ := s.Map()
			if !cutEqual(canon(want), canon(got)) {
				t.Fatalf("query_datasf(%q): sample row %d = %s; row %d of the full result = %s", q, i, s, i, page.Data[i])
			}
		}
	})
}

// cutEqual reports whether got equals want, where a text of got may instead
// be a prefix of want's text ending in dualresp.TruncationMark.
func cutEqual(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			if gv, ok := g[k]; !ok || !cutEqual(v, gv) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if g == w {
			return true
		}
		p, cut := strings.CutSuffix(g, dualresp.TruncationMark)
		return cut && strings.HasPrefix(w, p)
	}
	return cmp.Equal(want, got)
}
