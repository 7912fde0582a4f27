package properties_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// genToolCall draws a tool call: valid and invalid arguments of every tool
// (wrong JSON types, unknown arguments, bad ids, blank or long text, SoQL
// syntax errors, unknown columns, datasets the portal does not have).
func genToolCall(t *rapid.T, e *env) (string, map[string]any) {
	ids := allDatasetIDs(e)
	anyID := rapid.OneOf(rapid.SampledFrom(ids), genDatasetID(), rapid.Just("zzzz-9999")).Draw(t, "dataset_id")
	junk := rapid.SampledFrom([]any{nil, 3, -1, 1e9, true, "", " ", "x", []any{1}, map[string]any{"a": 1}}).Draw(t, "junk")
	switch rapid.IntRange(0, 6).Draw(t, "tool") {
	case 0:
		args := map[string]any{"query": rapid.OneOf(rapid.SampledFrom(e.words), genText(500, false)).Draw(t, "query")}
		if rapid.Bool().Draw(t, "limit") {
			args["limit"] = rapid.SampledFrom([]any{1, 5, 20, 21, 0, -3, "5", 2.5}).Draw(t, "limit value")
		}
		if rapid.IntRange(0, 3).Draw(t, "junk arg") == 0 {
			args[rapid.SampledFrom([]string{"query", "limit", "format", "bogus"}).Draw(t, "junk key")] = junk
		}
		return "search_datasf", args
	case 1:
		args := map[string]any{}
		if rapid.Bool().Draw(t, "category") {
			args["category"] = rapid.SampledFrom([]any{"Public Safety", "Transportation", "", "none such", 7}).Draw(t, "category value")
		}
		if rapid.Bool().Draw(t, "limit") {
			args["limit"] = rapid.SampledFrom([]any{1, 10, 100, 101, 0, "3"}).Draw(t, "limit value")
		}
		return "list_datasf", args
	case 2:
		args := map[string]any{"dataset_id": anyID}
		if rapid.IntRange(0, 3).Draw(t, "junk arg") == 0 {
			args[rapid.SampledFrom([]string{"dataset_id", "format", "bogus"}).Draw(t, "junk key")] = junk
		}
		return "get_schema", args
	case 3, 4:
		soqlText := rapid.OneOf(
			rapid.Custom(genPeopleQuery),
			rapid.SampledFrom([]string{"SELECT", "SELECT n WHERE", "SELECT nmae, scroe", "SELECT no_such_column_xyz", "SELECT n FROM x", "", "   ", strings.Repeat("x", 4001)}),
		).Draw(t, "soql")
		id := peopleID
		if rapid.IntRange(0, 3).Draw(t, "other dataset") == 0 {
			id = anyID
		}
		args := map[string]any{"dataset_id": id, "soql": soqlText}
		if rapid.IntRange(0, 3).Draw(t, "junk arg") == 0 {
			args[rapid.SampledFrom([]string{"sample_size", "auto_correct", "format", "soql", "bogus"}).Draw(t, "junk key")] = junk
		}
		return "query_datasf", args
	case 5:
		return "list_results", map[string]any{}
	}
	return "analyze_results", map[string]any{rapid.SampledFrom([]string{"sql", "query", "bogus"}).Draw(t, "key"): junk}
}

// Property 13: every tool response, success or error, has a content array
// with at least one item that has a type and a text. (Also property 16 at
// the MCP level: a validation error's text names every field its details
// list.)
func TestToolResponsesHaveTextContent(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	var errorsSeen, successes int
	rapid.Check(t, func(t *rapid.T) {
		tool, args := genToolCall(t, e)
		res, err := e.call(t.Context(), tool, args)
		if err != nil {
			t.Fatalf("%s(%v): protocol error %v; tools answer problems as results", tool, args, err)
		}
		raw, v := resultJSON(t, res)
		content, ok := v["content"].([]any)
		if !ok || len(content) == 0 {
			t.Fatalf("%s(%v): content is %T of length %d; want a non-empty array: %s", tool, args, v["content"], len(content), raw)
		}
		var text string
		for _, c := range content {
			m, _ := c.(map[string]any)
			typ, _ := m["type"].(string)
			if s, ok := m["text"].(string); ok && typ != "" && s != "" {
				text = s
				break
			}
		}
		if text == "" {
			t.Fatalf("%s(%v): no content item has a type and a text: %s", tool, args, raw)
		}
		if !res.IsError {
			successes++
			return
		}
		errorsSeen++
		var te struct {
			Error     string `json:"error"`
			ErrorType string `json:"error_type"`
			Details   struct {
				Fields []string `json:"fields"`
				Field  string   `json:"field"`
			} `json:"details"`
		}
		if err := json.Unmarshal([]byte(text), &te); err != nil {
			t.Fatalf("%s(%v): error text %q is not the JSON {error, error_type, details}: %v", tool, args, text, err)
		}
		if te.ErrorType == "validation" {
			fields := te.Details.Fields
			if te.Details.Field != "" {
				fields = append(fields, te.Details.Field)
			}
			for _, f := range fields {
				if !strings.Contains(te.Error, f) {
					t.Fatalf("%s(%v): validation error %q does not name the field %q", tool, args, te.Error, f)
				}
			}
		}
	})
	t.Logf("successes: %d, error results: %d", successes, errorsSeen)
}

// d1Schema is the schema of the datasets D1 generates: n unique, cat text,
// val number and ok checkbox, each of the last three with random nulls.
func d1Schema(id string) socratatest.Schema {
	return socratatest.Schema{ID: id, Name: "D1 " + id, Category: "Testing", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Cat", FieldName: "cat", DataType: "text"},
		{Name: "Val", FieldName: "val", DataType: "number"},
		{Name: "Ok", FieldName: "ok", DataType: "checkbox"},
	}}
}

// genD1Query draws a query over a D1 dataset: a selection, a random WHERE,
// an optional ORDER BY, an optional LIMIT (and OFFSET).
func genD1Query(t *rapid.T) string {
	var b strings.Builder
	grouped := rapid.IntRange(0, 5).Draw(t, "grouped") == 0
	switch {
	case grouped:
		b.WriteString("SELECT cat, count(*) AS c, max(val) AS top")
	case rapid.Bool().Draw(t, "star"):
		b.WriteString("SELECT *")
	default:
		cols := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"n", "cat", "val", "ok"}), 1, 4, func(s string) string { return s }).Draw(t, "columns")
		b.WriteString("SELECT " + strings.Join(cols, ", "))
	}
	cond := func() string {
		switch rapid.IntRange(0, 6).Draw(t, "cond") {
		case 0:
			return fmt.Sprintf("n %s %d", rapid.SampledFrom([]string{"<", ">=", "!="}).Draw(t, "op"), rapid.IntRange(0, 3000).Draw(t, "bound"))
		case 1:
			return fmt.Sprintf("val > %d", rapid.IntRange(-50, 50).Draw(t, "val bound"))
		case 2:
			return "cat = '" + rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, "cat") + "'"
		case 3:
			return "cat IS " + rapid.SampledFrom([]string{"", "NOT "}).Draw(t, "not") + "NULL"
		case 4:
			return "ok = " + rapid.SampledFrom([]string{"true", "false"}).Draw(t, "bool")
		case 5:
			return "val IS NULL"
		}
		return fmt.Sprintf("n BETWEEN %d AND %d", rapid.IntRange(0, 1000).Draw(t, "lo"), rapid.IntRange(0, 3000).Draw(t, "hi"))
	}
	if rapid.Bool().Draw(t, "where") {
		b.WriteString(" WHERE " + cond())
		for range rapid.IntRange(0, 2).Draw(t, "more conds") {
			b.WriteString(rapid.SampledFrom([]string{" AND ", " OR ", " AND NOT "}).Draw(t, "join") + cond())
		}
	}
	if grouped {
		b.WriteString(" GROUP BY cat")
	}
	if rapid.Bool().Draw(t, "order") {
		if grouped {
			b.WriteString(" ORDER BY " + rapid.SampledFrom([]string{"c DESC", "top", "cat DESC"}).Draw(t, "order by"))
		} else {
			b.WriteString(" ORDER BY " + rapid.SampledFrom([]string{"val", "val DESC", "cat", "ok DESC", "n DESC"}).Draw(t, "order by"))
		}
	}
	if rapid.Bool().Draw(t, "limit") {
		fmt.Fprintf(&b, " LIMIT %d", rapid.IntRange(0, 3500).Draw(t, "limit n"))
		if rapid.Bool().Draw(t, "offset") {
			fmt.Fprintf(&b, " OFFSET %d", rapid.IntRange(0, 200).Draw(t, "offset n"))
		}
	}
	return b.String()
}

// Property D1: for a generated dataset (0..3000 rows, random nulls) and a
// generated query, run through query_datasf, concatenating the REST pages of
// random sizes in order gives the full result fetched directly from the
// portal in one request in the stable order: no row twice, none missing,
// and the count equals total_count.
func TestPagesConcatenateToFullResult(t *testing.T) {
	t.Parallel()
	e := sharedEnv(t)
	var rowsSeen, pages int
	rapid.Check(t, func(t *rapid.T) {
		id := newDatasetID()
		n := rapid.IntRange(0, 3000).Draw(t, "rows")
		seed := rapid.Uint64().Draw(t, "seed")
		nulls := [3]int{rapid.IntRange(0, 100).Draw(t, "cat null %"), rapid.IntRange(0, 100).Draw(t, "val null %"), rapid.IntRange(0, 100).Draw(t, "ok null %")}
		r := rand.New(rand.NewPCG(seed, 3))
		err := e.fake.AddGenerated(context.Background(), d1Schema(id), n, func(i int) map[string]any {
			row := map[string]any{"n": i}
			if r.IntN(100) >= nulls[0] {
				row["cat"] = []string{"a", "b", "c", "d"}[r.IntN(4)]
			}
			if r.IntN(100) >= nulls[1] {
				row["val"] = r.IntN(101) - 50
			}
			if r.IntN(100) >= nulls[2] {
				row["ok"] = r.IntN(2) == 0
			}
			return row
		})
		if err != nil {
			t.Fatalf("AddGenerated: %v", err)
		}
		q := genD1Query(t)
		res, err := e.call(t.Context(), "query_datasf", map[string]any{"dataset_id": id, "soql": q})
		if err != nil {
			t.Fatalf("query_datasf(%q): %v", q, err)
		}
		structuredOf(t, "query_datasf("+q+")", res)
		parsed := dualresp.Parse(res)
		if parsed == nil {
			t.Fatalf("query_datasf(%q): not a dual response", q)
		}

		// The full result, directly from the portal, in the stable order.
		pq, err := soql.Parse(q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", q, err)
		}
		stable := pq.WithStableOrder()
		if last := stable.Stages[len(stable.Stages)-1]; last.Limit == nil {
			all := int64(50000)
			last.Limit = &all
		}
		direct, err := e.client.Query(t.Context(), id, stable.String())
		if err != nil {
			t.Fatalf("direct query %q: %v", stable.String(), err)
		}

		// The pages, of random sizes.
		total := parsed.TotalCount
		lo := max(1, int(total)/12)
		var got []any
		for off := int64(0); off < total; {
			size := int64(rapid.IntRange(lo, max(lo, int(total))+3).Draw(t, "page size"))
			page, err := parsed.Fetch(t.Context(), dualresp.FetchOptions{Offset: off, Limit: size})
			if err != nil {
				t.Fatalf("Fetch(offset %d, limit %d) of %q: %v", off, size, q, err)
			}
			pages++
			if page.TotalCount != total {
				t.Fatalf("page at %d says total_count %d; the response said %d", off, page.TotalCount, total)
			}
			if len(page.Data) == 0 {
				t.Fatalf("page at %d of %d (limit %d) of %q is empty", off, total, size, q)
			}
			for _, row := range page.Data {
				got = append(got, canonRaw(row))
			}
			off += int64(len(page.Data))
		}
		rowsSeen += len(got)
		if int64(len(direct.Rows)) != total {
			t.Fatalf("query %q on %d rows: total_count %d; the portal returns %d rows for %q", q, n, total, len(direct.Rows), stable.String())
		}
		want := make([]any, len(direct.Rows))
		for i, row := range direct.Rows {
			want[i] = canon(row)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("query %q on %d rows: concatenated pages differ from the full result (-full +pages):\n%s", q, n, d)
		}
		seen := map[any]bool{}
		for _, row := range got {
			if v, ok := row.(map[string]any)["n"]; ok {
				if seen[v] {
					t.Fatalf("query %q: row n=%v comes twice", q, v)
				}
				seen[v] = true
			}
		}
	})
	t.Logf("rows compared: %d in %d pages", rowsSeen, pages)
}

// d7Queries are the stored queries D7 sends sort and paging values to:
// plain columns, an alias, an unaliased aggregate and an unaliased
// expression (their result column names are made up by the portal).
var d7Queries = []string{
	"SELECT n, name, score WHERE n < 120",
	"SELECT *",
	"SELECT name AS who, n, flag ORDER BY n DESC",
	"SELECT name, count(*) AS c GROUP BY name",
}

// d7DerivedQueries have result columns named by the portal (an unaliased
// aggregate or expression: "count", "upper_name").
var d7DerivedQueries = []string{
	"SELECT name, count(*) GROUP BY name",
	"SELECT upper(name), n WHERE n < 60",
}

// d7LimitQueries are stored queries with the user's own LIMIT/OFFSET.
var d7LimitQueries = []string{
	"SELECT n LIMIT 3",
	"SELECT name AS who, n, flag ORDER BY n DESC LIMIT 90",
	"SELECT n, score ORDER BY n LIMIT 30 OFFSET 2",
}

// d7Result is one stored query's resource, its columns and the full result.
type d7Result struct {
	url     string
	columns []string
	full    []any // unsorted, in the stored order
}

// pageBody is the REST page shape.
type pageBody struct {
	Data       []json.RawMessage `json:"data"`
	TotalCount int64             `json:"total_count"`
	Offset     int64             `json:"offset"`
	Returned   int64             `json:"returned_count"`
}

func restDo(t *rapid.T, method, u, body string) (int, []byte) {
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// multiset returns the sorted JSON encodings of rows.
func multiset(rows []any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		b, _ := json.Marshal(r)
		out[i] = string(b)
	}
	slices.Sort(out)
	return out
}

// Property D7: no sort field or paging value sent to the REST endpoint (POST
// body or GET parameters; column names, junk such as "x; DROP" or
// "a) OR (1=1", wrong JSON types, negative, huge or non-numeric numbers) can
// change which rows a query selects: the answer is a 400, or a window of a
// reordering of the same rows (same total, same multiset when read whole,
// sort fields only result columns).
func TestRESTSortAndPagingSelectSameRows(t *testing.T) {
	t.Parallel()
	checkSortAndPaging(t, d7Queries)
}

// Property D7 on stored queries with their own LIMIT (and OFFSET).
func TestRESTSortAndPagingSelectSameRowsLimited(t *testing.T) {
	t.Parallel()
	checkSortAndPaging(t, d7LimitQueries)
}

// Property D7 on stored queries whose result columns the portal names.
func TestRESTSortAndPagingSelectSameRowsDerived(t *testing.T) {
	t.Parallel()
	checkSortAndPaging(t, d7DerivedQueries)
}

func checkSortAndPaging(t *testing.T, queries []string) {
	e := sharedEnv(t)
	results := map[string]*d7Result{}
	sortedFull := map[string][]any{} // query + sort JSON -> full result
	var ok200, bad400 int
	rapid.Check(t, func(t *rapid.T) {
		q := rapid.SampledFrom(queries).Draw(t, "query")
		r := results[q]
		if r == nil {
			res, err := e.call(t.Context(), "query_datasf", map[string]any{"dataset_id": peopleID, "soql": q, "auto_correct": false})
			if err != nil {
				t.Fatalf("query_datasf(%q): %v", q, err)
			}
			structuredOf(t, "query_datasf("+q+")", res)
			p := dualresp.Parse(res)
			r = &d7Result{url: p.ResourceURL}
			for _, c := range p.Columns {
				r.columns = append(r.columns, c.Name)
			}
			rows, err := p.FetchAll(t.Context(), dualresp.FetchAllOptions{PageSize: 5000})
			if err != nil {
				t.Fatalf("FetchAll(%q): %v", q, err)
			}
			for _, row := range rows {
				r.full = append(r.full, canonRaw(row))
			}
			results[q] = r
		}

		junkNames := []string{"x; DROP", "a) OR (1=1", ":id", "n` DESC, `score", "", "N", "name ", "count(*)", "1=1"}
		field := rapid.OneOf(rapid.SampledFrom(r.columns), rapid.SampledFrom(junkNames)).Draw(t, "field")
		order := rapid.SampledFrom([]any{"asc", "desc", "DESC", "", "sideways", "asc; DROP", nil, 1}).Draw(t, "order")
		sortVal := rapid.SampledFrom([]any{
			nil,
			map[string]any{"field": field, "order": order},
			[]any{map[string]any{"field": field, "order": order}},
			[]any{map[string]any{"field": field}, map[string]any{"field": rapid.SampledFrom(r.columns).Draw(t, "second"), "order": "desc"}},
			"name", 5,
		}).Draw(t, "sort")
		paging := rapid.SampledFrom([]any{nil, 0, 1, 7, 50, -1, -100, int64(1) << 62, 1e300, 2.5, "5", "abc", true}).Draw(t, "offset")
		limit := rapid.SampledFrom([]any{nil, 1, 3, 40, 1000, 0, -5, int64(1) << 62, 2.5, "10", "x"}).Draw(t, "limit")

		var (
			status  int
			body    []byte
			sortKey []byte
		)
		if rapid.Bool().Draw(t, "post") {
			req := map[string]any{}
			if paging != nil {
				req["offset"] = paging
			}
			if limit != nil {
				req["limit"] = limit
			}
			if sortVal != nil {
				req["sort"] = sortVal
			}
			b, _ := json.Marshal(req)
			status, body = restDo(t, http.MethodPost, r.url, string(b))
			sortKey, _ = json.Marshal(sortVal)
		} else {
			sortVal = nil // GET pages take no sort
			v := url.Values{}
			key := rapid.SampledFrom([]string{"offset", "skip"}).Draw(t, "offset key")
			if paging != nil {
				v.Set(key, fmt.Sprint(paging))
			}
			if limit != nil {
				v.Set("limit", fmt.Sprint(limit))
			}
			if len(v) == 0 {
				v.Set("limit", "5")
			}
			status, body = restDo(t, http.MethodGet, r.url+"?"+v.Encode(), "")
			sortKey = []byte("null")
		}
		switch status {
		case http.StatusBadRequest:
			bad400++
			return
		case http.StatusOK:
			ok200++
		default:
			t.Fatalf("query %q, sort %s, offset %v, limit %v: status %d %s; want 200 or 400", q, sortKey, paging, limit, status, body)
		}
		var page pageBody
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("page body %s: %v", body, err)
		}
		if page.TotalCount != int64(len(r.full)) {
			t.Fatalf("query %q, sort %s: total_count %d; the result has %d rows", q, sortKey, page.TotalCount, len(r.full))
		}
		// Every sort field of an accepted request is a result column.
		var fields []map[string]any
		switch s := sortVal.(type) {
		case map[string]any:
			fields = []map[string]any{s}
		case []any:
			for _, f := range s {
				fields = append(fields, f.(map[string]any))
			}
		}
		for _, f := range fields {
			if !slices.Contains(r.columns, f["field"].(string)) {
				t.Fatalf("query %q: sort by %q (not a result column of %v) was accepted", q, f["field"], r.columns)
			}
		}
		// The whole result in that order is a reordering of the same rows.
		key := q + "\x00" + string(sortKey)
		full, ok := sortedFull[key]
		if !ok {
			b, _ := json.Marshal(map[string]any{"offset": 0, "limit": 10000, "sort": json.RawMessage(sortKey)})
			st, fb := restDo(t, http.MethodPost, r.url, string(b))
			var fp pageBody
			if st != http.StatusOK || json.Unmarshal(fb, &fp) != nil {
				t.Fatalf("query %q: whole result sorted by %s: status %d %s", q, sortKey, st, fb)
			}
			for _, row := range fp.Data {
				full = append(full, canonRaw(row))
			}
			if d := cmp.Diff(multiset(r.full), multiset(full)); d != "" {
				t.Fatalf("query %q: sorting by %s changed which rows are selected (-unsorted +sorted):\n%s", q, sortKey, d)
			}
			sortedFull[key] = full
		}
		// The page is the window of that order at the offset it reports.
		// (An offset past the end gives an empty page.)
		if page.Offset < 0 || page.Returned != int64(len(page.Data)) || (page.Returned > 0 && page.Offset+page.Returned > int64(len(full))) {
			t.Fatalf("query %q: page offset %d, returned %d of %d rows", q, page.Offset, page.Returned, len(full))
		}
		for i, row := range page.Data {
			if d := cmp.Diff(full[page.Offset+int64(i)], canonRaw(row)); d != "" {
				t.Fatalf("query %q, sort %s, offset %v, limit %v: row %d of the page is not row %d of the sorted result:\n%s", q, sortKey, paging, limit, i, page.Offset+int64(i), d)
			}
		}
	})
	t.Logf("accepted requests: %d; rejected with 400: %d", ok200, bad400)
}
