package localportal

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// functionsDataset is the small dataset the function tests query.
func functionsDataset(t *testing.T) *Emulator {
	t.Helper()
	p := newPortal(t)
	schema := Schema{ID: "func-0001", Name: "Functions", Columns: []socrata.Column{
		{FieldName: "t", DataType: "text"}, {FieldName: "n", DataType: "number"}, {FieldName: "m", DataType: "number"},
		{FieldName: "d", DataType: "calendar_date"}, {FieldName: "f", DataType: "date"}, {FieldName: "b", DataType: "checkbox"},
		{FieldName: "p", DataType: "point"}, {FieldName: "l", DataType: "location"}, {FieldName: "u", DataType: "url"},
		{FieldName: "g", DataType: "multipolygon"}}}
	rows := []map[string]any{
		{"t": "Café Noir", "n": 2.5, "m": 10, "d": "2024-03-15T13:45:30", "f": "2024-03-15T20:45:30Z", "b": true,
			"p": "POINT (-122.41 37.78)", "l": "1 MARKET ST\nSAN FRANCISCO, CA 94105\n(37.78, -122.41)",
			"u": "Home (https://a.example/x)",
			"g": map[string]any{"type": "MultiPolygon", "coordinates": []any{[]any{[]any{[]any{0, 0}, []any{1, 0}, []any{1, 1}, []any{0, 0}}}}}},
		{"t": "café noir", "n": -1, "m": 20, "d": "2023-12-31T23:59:59", "b": false, "p": "(37.70, -122.50)", "l": "(37.70, -122.50)"},
		{"t": "BAR", "n": 4, "m": 30, "d": "2024-01-01T00:00:00", "p": "POINT (-122.40 37.79)"},
		{"m": 40},
	}
	if err := p.AddGenerated(t.Context(), schema, len(rows), func(i int) map[string]any { return rows[i] }); err != nil {
		t.Fatal(err)
	}
	return p
}

type fnCase struct {
	soql string
	want []map[string]any
}

func one(k string, v any) []map[string]any { return []map[string]any{{k: v}} }

func col(k string, vs ...any) []map[string]any {
	out := make([]map[string]any, len(vs))
	for i, v := range vs {
		out[i] = map[string]any{}
		if v != nil {
			out[i][k] = v
		}
	}
	return out
}

// functionCases has, for every function and keyword that
// docs/soql-functions.md marks supported by the local portal, a query on
// functionsDataset and the answer its documentation implies.
var functionCases = map[string][]fnCase{
	"distinct":    {{"SELECT DISTINCT b WHERE b IS NOT NULL ORDER BY b", col("b", false, true)}},
	"avg":         {{"SELECT avg(n) AS x", one("x", "1.8333333333333333")}, {"SELECT avg(m) AS x", one("x", "25")}},
	"between":     {{"SELECT t WHERE n BETWEEN 2 AND 4 ORDER BY :id", col("t", "Café Noir", "BAR")}},
	"not between": {{"SELECT t WHERE n NOT BETWEEN 2 AND 4 ORDER BY :id", col("t", "café noir")}},
	"case": {{"SELECT case(n > 3, 'big', n > 0, 'small') AS x ORDER BY :id", col("x", "small", nil, "big", nil)},
		{"SELECT CASE WHEN n > 3 THEN 'big' ELSE 'other' END AS x ORDER BY :id", col("x", "other", "other", "big", "other")}},
	"count":                 {{"SELECT count(*) AS a, count(n) AS b, count(DISTINCT m) AS c", []map[string]any{{"a": "4", "b": "3", "c": "4"}}}},
	"sum":                   {{"SELECT sum(n) AS x, sum(m) AS y", []map[string]any{{"x": "5.5", "y": "100"}}}},
	"min":                   {{"SELECT min(d) AS x, min(t) AS y", []map[string]any{{"x": "2023-12-31T23:59:59.000", "y": "BAR"}}}},
	"max":                   {{"SELECT max(d) AS x, max(n) AS y", []map[string]any{{"x": "2024-03-15T13:45:30.000", "y": "4"}}}},
	"median":                {{"SELECT median(m) AS x", one("x", "25")}, {"SELECT median(n) AS x", one("x", "2.5")}},
	"stddev_pop":            {{"SELECT stddev_pop(m) AS x", one("x", "11.180339887498949")}},
	"stddev_samp":           {{"SELECT stddev_samp(m) AS x", one("x", "12.909944487358056")}},
	"regr_slope":            {{"SELECT regr_slope(m, n) AS x WHERE n IS NOT NULL", one("x", "1.139240506329114")}},
	"regr_intercept":        {{"SELECT regr_intercept(m, n) AS x", one("x", "17.911392405063292")}},
	"regr_r2":               {{"SELECT regr_r2(m, m) AS x", one("x", "1")}},
	"date_extract_d":        {{"SELECT date_extract_d(d) AS x ORDER BY :id LIMIT 1", one("x", "15")}},
	"date_extract_dow":      {{"SELECT date_extract_dow(d) AS x ORDER BY :id LIMIT 2", col("x", "5", "0")}},
	"date_extract_hh":       {{"SELECT date_extract_hh(d) AS x ORDER BY :id LIMIT 1", one("x", "13")}},
	"date_extract_m":        {{"SELECT date_extract_m(d) AS x ORDER BY :id LIMIT 1", one("x", "3")}},
	"date_extract_mm":       {{"SELECT date_extract_mm(d) AS x ORDER BY :id LIMIT 1", one("x", "45")}},
	"date_extract_ss":       {{"SELECT date_extract_ss(d) AS x ORDER BY :id LIMIT 1", one("x", "30")}},
	"date_extract_woy":      {{"SELECT date_extract_woy(d) AS x ORDER BY :id LIMIT 1", one("x", "11")}},
	"date_extract_y":        {{"SELECT date_extract_y(d) AS x ORDER BY :id LIMIT 1", one("x", "2024")}},
	"date_trunc_y":          {{"SELECT date_trunc_y(d) AS x ORDER BY :id LIMIT 1", one("x", "2024-01-01T00:00:00.000")}},
	"date_trunc_ym":         {{"SELECT date_trunc_ym(d) AS x ORDER BY :id LIMIT 1", one("x", "2024-03-01T00:00:00.000")}},
	"date_trunc_ymd":        {{"SELECT date_trunc_ymd(d) AS x ORDER BY :id LIMIT 1", one("x", "2024-03-15T00:00:00.000")}},
	"date_diff_d":           {{"SELECT date_diff_d(d, '2024-03-01T00:00:00') AS x ORDER BY :id LIMIT 1", one("x", "14")}},
	"get_utc_date":          {{"SELECT count(*) AS x WHERE f < get_utc_date()", one("x", "1")}},
	"get_date_utc":          {{"SELECT count(*) AS x WHERE f > get_date_utc()", one("x", "0")}},
	"to_floating_timestamp": {{"SELECT to_floating_timestamp(f, 'America/Los_Angeles') AS x ORDER BY :id LIMIT 1", one("x", "2024-03-15T13:45:30.000")}},
	"distance_in_meters":    {{"SELECT distance_in_meters(p, 'POINT (-122.41 37.78)') AS x ORDER BY :id LIMIT 1", one("x", "0")}},
	"within_circle": {{"SELECT count(*) AS x WHERE within_circle(p, 37.78, -122.41, 2000)", one("x", "2")},
		{"SELECT count(*) AS x WHERE within_circle(l, 37.78, -122.41, 2000)", one("x", "1")}},
	"within_box":     {{"SELECT count(*) AS x WHERE within_box(p, 37.8, -122.45, 37.75, -122.39)", one("x", "2")}},
	"within_polygon": {{"SELECT count(*) AS x WHERE within_polygon(p, 'MULTIPOLYGON (((-122.45 37.75, -122.39 37.75, -122.39 37.80, -122.45 37.80, -122.45 37.75)))')", one("x", "2")}},
	"intersects":     {{"SELECT count(*) AS x WHERE intersects(p, 'POLYGON ((-122.55 37.65, -122.45 37.65, -122.45 37.75, -122.55 37.75, -122.55 37.65))')", one("x", "1")}},
	"extent": {{"SELECT extent(p) AS x", one("x", map[string]any{"type": "MultiPolygon", "coordinates": []any{[]any{[]any{
		[]any{-122.5, 37.7}, []any{-122.4, 37.7}, []any{-122.4, 37.79}, []any{-122.5, 37.79}, []any{-122.5, 37.7}}}}})}},
	"convex_hull": {{"SELECT convex_hull(p) AS x", one("x", map[string]any{"type": "Polygon", "coordinates": []any{[]any{
		[]any{-122.5, 37.7}, []any{-122.41, 37.78}, []any{-122.4, 37.79}, []any{-122.5, 37.7}}}})}}, // counterclockwise
	"num_points":           {{"SELECT num_points(g) AS x, num_points(p) AS y ORDER BY :id LIMIT 1", []map[string]any{{"x": "4", "y": "1"}}}},
	"greatest":             {{"SELECT greatest(n, m, 15) AS x ORDER BY :id", col("x", "15", "20", "30", "40")}},
	"least":                {{"SELECT least(n, m) AS x ORDER BY :id", col("x", "2.5", "-1", "4", "40")}},
	"in":                   {{"SELECT t WHERE t IN ('BAR', 'bar') ORDER BY :id", col("t", "BAR")}},
	"not in":               {{"SELECT count(*) AS x WHERE t NOT IN ('BAR')", one("x", "2")}},
	"like":                 {{"SELECT t WHERE t LIKE '%noir' ORDER BY :id", col("t", "café noir")}},
	"not like":             {{"SELECT count(*) AS x WHERE t NOT LIKE 'B%'", one("x", "2")}},
	"ln":                   {{"SELECT ln(m) AS x ORDER BY :id LIMIT 1", one("x", "2.302585092994046")}},
	"lower":                {{"SELECT lower(t) AS x ORDER BY :id LIMIT 1", one("x", "café noir")}},
	"upper":                {{"SELECT upper(t) AS x ORDER BY :id LIMIT 1", one("x", "CAFÉ NOIR")}},
	"round":                {{"SELECT round(n, 0) AS x, round(2.345, 2) AS y ORDER BY :id LIMIT 1", []map[string]any{{"x": "3", "y": "2.35"}}}},
	"starts_with":          {{"SELECT count(*) AS x WHERE starts_with(t, 'Caf')", one("x", "1")}},
	"unaccent":             {{"SELECT unaccent(t) AS x ORDER BY :id LIMIT 1", one("x", "Cafe Noir")}},
	"caseless_eq":          {{"SELECT count(*) AS x WHERE caseless_eq(t, 'CAFÉ NOIR')", one("x", "2")}},
	"caseless_ne":          {{"SELECT count(*) AS x WHERE caseless_ne(t, 'bar')", one("x", "2")}},
	"caseless_starts_with": {{"SELECT count(*) AS x WHERE caseless_starts_with(t, 'CAF')", one("x", "2")}},
	"caseless_contains":    {{"SELECT count(*) AS x WHERE caseless_contains(t, 'NOIR')", one("x", "2")}},
	"caseless_one_of":      {{"SELECT count(*) AS x WHERE caseless_one_of(t, 'bar', 'café noir')", one("x", "3")}},
	"caseless_not_one_of":  {{"SELECT count(*) AS x WHERE caseless_not_one_of(t, 'bar')", one("x", "2")}},
	// Data transform functions.
	"abs":                            {{"SELECT abs(n) AS x ORDER BY :id LIMIT 2", col("x", "2.5", "1")}},
	"coalesce":                       {{"SELECT coalesce(t, 'none') AS x ORDER BY :id", col("x", "Café Noir", "café noir", "BAR", "none")}},
	"contains":                       {{"SELECT count(*) AS x WHERE contains(t, 'oir')", one("x", "2")}},
	"length":                         {{"SELECT length(t) AS x ORDER BY :id LIMIT 1", one("x", "9")}},
	"trim":                           {{"SELECT trim('  a  ') AS x LIMIT 1", one("x", "a")}},
	"trim_leading":                   {{"SELECT trim_leading('  a  ') AS x LIMIT 1", one("x", "a  ")}},
	"trim_trailing":                  {{"SELECT trim_trailing('  a  ') AS x LIMIT 1", one("x", "  a")}},
	"left_pad":                       {{"SELECT left_pad('7', 3, '0') AS x LIMIT 1", one("x", "007")}},
	"right_pad":                      {{"SELECT right_pad('7', 3, '0') AS x LIMIT 1", one("x", "700")}},
	"replace":                        {{"SELECT replace(t, 'Noir', 'Blanc') AS x ORDER BY :id LIMIT 1", one("x", "Café Blanc")}},
	"title_case":                     {{"SELECT title_case('the CAT in the hat') AS x LIMIT 1", one("x", "The Cat in the Hat")}},
	"slice":                          {{"SELECT slice(t, 0, 4) AS x ORDER BY :id LIMIT 1", one("x", "Café")}},
	"to_number":                      {{"SELECT to_number('12.5') + 1 AS x LIMIT 1", one("x", "13.5")}},
	"to_text":                        {{"SELECT to_text(m) || '!' AS x ORDER BY :id LIMIT 1", one("x", "10!")}},
	"is_null":                        {{"SELECT count(*) AS x WHERE is_null(t)", one("x", "1")}},
	"is_not_null":                    {{"SELECT count(*) AS x WHERE is_not_null(t)", one("x", "3")}},
	"url_url":                        {{"SELECT url_url(u) AS x ORDER BY :id LIMIT 1", one("x", "https://a.example/x")}},
	"url_description":                {{"SELECT url_description(u) AS x ORDER BY :id LIMIT 1", one("x", "Home")}},
	"point_latitude":                 {{"SELECT point_latitude(p) AS x ORDER BY :id LIMIT 1", one("x", "37.78")}},
	"point_longitude":                {{"SELECT point_longitude(p) AS x ORDER BY :id LIMIT 1", one("x", "-122.41")}},
	"location_point":                 {{"SELECT location_point(l) AS x ORDER BY :id LIMIT 1", one("x", map[string]any{"type": "Point", "coordinates": []any{-122.41, 37.78}})}},
	"location_to_point":              {{"SELECT location_to_point(l) AS x ORDER BY :id LIMIT 1", one("x", map[string]any{"type": "Point", "coordinates": []any{-122.41, 37.78}})}},
	"location_address":               {{"SELECT location_address(l) AS x ORDER BY :id LIMIT 1", one("x", "1 MARKET ST")}},
	"location_city":                  {{"SELECT location_city(l) AS x ORDER BY :id LIMIT 1", one("x", "SAN FRANCISCO")}},
	"location_state":                 {{"SELECT location_state(l) AS x ORDER BY :id LIMIT 1", one("x", "CA")}},
	"location_zip":                   {{"SELECT location_zip(l) AS x ORDER BY :id LIMIT 1", one("x", "94105")}},
	"make_point":                     {{"SELECT make_point(37.5, -122.5) AS x LIMIT 1", one("x", map[string]any{"type": "Point", "coordinates": []any{-122.5, 37.5}})}},
	"floating_timestamp_year":        {{"SELECT floating_timestamp_year(d) AS x ORDER BY :id LIMIT 1", one("x", "2024")}},
	"floating_timestamp_month":       {{"SELECT floating_timestamp_month(d) AS x ORDER BY :id LIMIT 1", one("x", "3")}},
	"floating_timestamp_day":         {{"SELECT floating_timestamp_day(d) AS x ORDER BY :id LIMIT 1", one("x", "15")}},
	"floating_timestamp_hour":        {{"SELECT floating_timestamp_hour(d) AS x ORDER BY :id LIMIT 1", one("x", "13")}},
	"floating_timestamp_minute":      {{"SELECT floating_timestamp_minute(d) AS x ORDER BY :id LIMIT 1", one("x", "45")}},
	"floating_timestamp_second":      {{"SELECT floating_timestamp_second(d) AS x ORDER BY :id LIMIT 1", one("x", "30")}},
	"floating_timestamp_day_of_week": {{"SELECT floating_timestamp_day_of_week(d) AS x ORDER BY :id LIMIT 1", one("x", "5")}},
	// Operators listed as data transforms.
	"+":   {{"SELECT n + 1 AS x ORDER BY :id LIMIT 1", one("x", "3.5")}},
	"-":   {{"SELECT m - n AS x ORDER BY :id LIMIT 1", one("x", "7.5")}},
	"*":   {{"SELECT n * 2 AS x ORDER BY :id LIMIT 1", one("x", "5")}},
	"/":   {{"SELECT m / 4 AS x ORDER BY :id LIMIT 1", one("x", "2.5")}},
	"%":   {{"SELECT m % 3 AS x ORDER BY :id LIMIT 1", one("x", "1")}},
	"^":   {{"SELECT m ^ 2 AS x ORDER BY :id LIMIT 1", one("x", "100")}},
	"||":  {{"SELECT t || '!' AS x ORDER BY :id LIMIT 1", one("x", "Café Noir!")}},
	"=":   {{"SELECT count(*) AS x WHERE t = 'BAR'", one("x", "1")}, {"SELECT count(*) AS x WHERE t = 'bar'", one("x", "0")}},
	"==":  {{"SELECT count(*) AS x WHERE m == 10", one("x", "1")}},
	"!=":  {{"SELECT count(*) AS x WHERE m != 10", one("x", "3")}},
	"<>":  {{"SELECT count(*) AS x WHERE m <> 10", one("x", "3")}},
	"<":   {{"SELECT count(*) AS x WHERE d < '2024-01-01'", one("x", "1")}},
	"<=":  {{"SELECT count(*) AS x WHERE d <= '2024-01-01'", one("x", "2")}},
	">":   {{"SELECT count(*) AS x WHERE m > 10", one("x", "3")}},
	">=":  {{"SELECT count(*) AS x WHERE m >= 10", one("x", "4")}},
	"and": {{"SELECT count(*) AS x WHERE m > 10 AND n > 0", one("x", "1")}},
	"or":  {{"SELECT count(*) AS x WHERE m = 10 OR n < 0", one("x", "2")}},
	"not": {{"SELECT count(*) AS x WHERE NOT (m = 10)", one("x", "3")}},
	// Clauses and keywords of the query language.
	"order by ... nulls": {{"SELECT n ORDER BY n", col("n", "-1", "2.5", "4", nil)}, {"SELECT n ORDER BY n DESC", col("n", nil, "4", "2.5", "-1")},
		{"SELECT n ORDER BY n DESC NULL LAST", col("n", "4", "2.5", "-1", nil)}},
	"is null":           {{"SELECT count(*) AS x WHERE n IS NULL", one("x", "1")}},
	"is not null":       {{"SELECT count(*) AS x WHERE n IS NOT NULL", one("x", "3")}},
	"search":            {{"SELECT t SEARCH 'NOIR' ORDER BY :id", col("t", "Café Noir", "café noir")}},
	"group by / having": {{"SELECT b, count(*) AS c GROUP BY b HAVING count(*) > 1", []map[string]any{{"c": "2"}}}},
	"|>":                {{"SELECT m WHERE m > 10 |> SELECT sum(m) AS s", one("s", "90")}},
	"::cast":            {{"SELECT m::text || 'x' AS x ORDER BY :id LIMIT 1", one("x", "10x")}},
}

// TestFunctionTable checks docs/soql-functions.md against the code: every
// function marked supported by the local portal has cases here that pass,
// every one marked not supported is refused, and every one marked
// parsed parses.
func TestFunctionTable(t *testing.T) {
	t.Parallel()
	entries := readFunctionTable(t)
	p := functionsDataset(t)
	tested := map[string]bool{}
	for _, e := range entries {
		cases, ok := functionCases[e.name]
		switch {
		case e.portal && !ok:
			t.Errorf("%s is marked supported by the portal in docs/soql-functions.md but has no test case", e.name)
		case !e.portal && ok:
			t.Errorf("%s has test cases but docs/soql-functions.md marks it not supported by the portal", e.name)
		}
		if e.portal {
			tested[e.name] = true
		}
		for _, c := range cases {
			got := query(t, p, "func-0001", c.soql)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s: %s (-want +got):\n%s", e.name, c.soql, diff)
			}
			if _, err := soql.Parse(c.soql); err != nil && e.parser {
				t.Errorf("%s: marked parsed, soql.Parse(%q): %v", e.name, c.soql, err)
			}
		}
		if !e.portal && e.call != "" {
			r := get(t, p, "/resource/func-0001.json", map[string][]string{"$query": {"SELECT " + e.call + " AS x"}})
			if r.status == 200 {
				t.Errorf("%s is marked not supported, but SELECT %s answered 200: %.200s", e.name, e.call, r.body)
			}
		}
		if e.parser && e.call != "" {
			if _, err := soql.Parse("SELECT " + e.call); err != nil {
				t.Errorf("%s is marked parsed, but soql.Parse(SELECT %s): %v", e.name, e.call, err)
			}
		}
	}
	for name := range functionCases {
		if !tested[name] {
			t.Errorf("test cases for %q, which docs/soql-functions.md does not list as supported", name)
		}
	}
}

type tableEntry struct {
	name           string
	call           string // an example call for unsupported functions, from the table's last column
	portal, parser bool
}

// readFunctionTable reads the rows "| name | group | portal | parser | notes |"
// of docs/soql-functions.md; a notes cell starting with "`call`" gives an
// example call.
func readFunctionTable(t *testing.T) []tableEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "soql-functions.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tableEntry
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.ReplaceAll(line, `\|`, "\x00"), "|"), "|")
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "\x00", "|")
		}
		if len(cells) < 5 {
			t.Fatalf("docs/soql-functions.md: row %q has %d cells; want 5", line, len(cells))
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		name = strings.TrimSuffix(name, "(...)")
		mark := func(s string) bool {
			s = strings.TrimSpace(s)
			if s != "yes" && s != "no" {
				t.Fatalf("docs/soql-functions.md: %s: support cell %q; want yes or no", name, s)
			}
			return s == "yes"
		}
		e := tableEntry{name: name, portal: mark(cells[2]), parser: mark(cells[3])}
		if notes := strings.TrimSpace(cells[4]); !e.portal && strings.HasPrefix(notes, "`") {
			e.call = strings.SplitN(notes[1:], "`", 2)[0]
		}
		if seen[name] {
			continue // listed in two groups (query function and data transform)
		}
		seen[name] = true
		out = append(out, e)
	}
	if len(out) < 50 {
		t.Fatalf("docs/soql-functions.md: only %d rows read", len(out))
	}
	return out
}

var _ = json.Marshal
