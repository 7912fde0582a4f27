package dualresp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// MIMEType is the MIME type of a resource's pages.
const MIMEType = "application/json"

// TruncationMark ends every value the byte budget cut.
const TruncationMark = "…[truncated]"

// Response is a created dual response: the sample for the model and the link
// to the full result. It renders without any MCP library: StructuredContent
// for the tool result's structuredContent, Text for its text content, and
// Link for its resource_link content; the adapters (dualresp/mcpgo,
// dualresp/gosdk) turn these into an SDK's tool result. Its rendering
// methods return fresh values each call.
type Response struct {
	rec         *Record
	url, uri    string
	budget      int
	executedAt  time.Time
	notes       []string // sentences the summary carries (Spec.Notes)
	footer      string   // the text's last line (Spec.Footer)
	queryStated bool     // the metadata states the query (Spec.QueryStated)
	hints       []Hint   // advice for the next call (WithHints)
	hintsJSON   []json.RawMessage
	keys        []string // the columns whose nulls the table writes as null (Spec.Keys)

	once sync.Once
	st   *buildState       // what fits in the budget, decided once
	rows []any             // the sample rows that fit
	enc  []json.RawMessage // their JSON, encoded once by fit
}

func newResponse(rec *Record, url, uri string, budget int, executedAt time.Time) *Response {
	return &Response{rec: rec.Clone(), url: url, uri: uri, budget: budget, executedAt: executedAt}
}

// Hint is advice an answer carries for the model's next call, when the
// answer alone would mislead (no row matched, but ignoring case a value
// would): its HintMessage is a sentence the summary says after "Hints:",
// and its JSON encoding (its own type's) is an entry of the structured
// content's "hints".
type Hint interface {
	HintMessage() string
}

// WithHints returns the response with hints: rendered once, with the rest
// of the answer, into its summary, text and structured content (and
// outside its byte budget: they come with answers that have next to no
// rows, and must reach the model whole). Use it before rendering r.
func (r *Response) WithHints(hints ...Hint) *Response {
	if len(hints) == 0 {
		return r
	}
	h := r.clone()
	h.hints = append(slices.Clip(r.hints), hints...)
	h.hintsJSON = make([]json.RawMessage, len(h.hints))
	for i, x := range h.hints {
		h.hintsJSON[i] = mustJSON(x)
	}
	return h
}

// WithNotes returns the response with more notes (see Spec.Notes): known
// only once the sample is in (the top group of a grouped count is null,
// say). They count in the byte budget, as Spec.Notes do. Use it before
// rendering r.
func (r *Response) WithNotes(notes ...string) *Response {
	if len(notes) == 0 {
		return r
	}
	h := r.clone()
	h.notes = append(slices.Clip(r.notes), notes...)
	return h
}

// clone is r not yet rendered: its budget is fitted again.
func (r *Response) clone() *Response {
	h := newResponse(r.rec, r.url, r.uri, r.budget, r.executedAt)
	h.notes, h.footer, h.queryStated, h.keys = r.notes, r.footer, r.queryStated, r.keys
	h.hints, h.hintsJSON = r.hints, r.hintsJSON
	return h
}

// ID returns the resource id.
func (r *Response) ID() string { return r.rec.ID }

// URL returns the REST URL of the full result.
func (r *Response) URL() string { return r.url }

// URI returns the MCP resource URI (resource://id).
func (r *Response) URI() string { return r.uri }

// TotalCount returns the exact number of rows of the result.
func (r *Response) TotalCount() int64 { return r.rec.TotalCount }

// Record returns a copy of the stored record as it was created.
func (r *Response) Record() *Record { return r.rec.Clone() }

// ExecutedAt returns when the response was created.
func (r *Response) ExecutedAt() time.Time { return r.executedAt }

// ExpiresAt returns when the resource expires; zero when pinned.
func (r *Response) ExpiresAt() time.Time { return r.rec.ExpiresAt }

// name returns the resource's name, never empty.
func (r *Response) name() string {
	if r.rec.Name != "" {
		return r.rec.Name
	}
	return "result " + r.rec.ID
}

// Summary returns the one-paragraph summary that opens the structured
// content and the text content.
func (r *Response) Summary() string {
	return r.build().summary
}

// StructuredContent returns the structured content for the model (see
// Structured):
//
//	{"summary": …, "results": [rows…],
//	 "resource": {"uri", "url"},
//	 "metadata": {caller metadata…, "total_count", "sample_count", "truncated",
//	              "columns" (names), "expires_at", …}}
//
// The resource's name is the resource_link's (Link), said once.
//
// What the model is given, this content, Text and Link together, stays
// within the Server's ByteBudget (see ModelBytes): when the full sample
// does not fit, long values are cut (ending in TruncationMark, with
// metadata.values_truncated = true) and rows are dropped (with
// metadata.sample_reduced = true; metadata.sample_count counts the rows
// included).
func (r *Response) StructuredContent() *Structured {
	return r.build().content
}

// Text returns the text content: the summary, a compact markdown table
// of the sample rows included in the structured content, and the Spec's
// Footer after a blank line.
func (r *Response) Text() string {
	b := r.build()
	text := b.summary + r.st.table(b.rows)
	if r.footer != "" {
		text += "\n\n" + r.footer
	}
	return text
}

// ModelBytes returns the size of what a model may be given of this
// response: the JSON of the structured content, of the text and of the
// link, plus what an MCP SDK adds around the last two
// (contentEnvelope). It is at most the Server's ByteBudget, hints aside
// (WithHints).
func (r *Response) ModelBytes() int {
	b := r.build()
	return r.st.modelBytes(b)
}

// Link returns the link to the full result for a resource_link content:
// its URI, name, description (with the page and export URLs) and MIME
// type; URL is set too, for SDKs whose links carry one.
func (r *Response) Link() ResourceLink {
	r.once.Do(func() { r.st = r.fit() }) // what fits is decided once; no need to render it again
	return r.st.link(len(r.rows))
}

// link returns the link of an answer with n sample rows.
func (st *buildState) link(n int) ResourceLink {
	r := st.r
	l := ResourceLink{URI: r.uri, URL: r.url, Name: st.name, MIMEType: MIMEType}
	if int64(n) < r.rec.TotalCount {
		// A partial answer says what the link is; its URL and the
		// download are the summary's, said once.
		l.Description = fmt.Sprintf("The complete result, %s", nouns(r.rec.TotalCount, "row"))
	}
	return l
}

// columnNames returns the columns of the text's table: the record's, else
// the keys of the first sample row, sorted.
func (r *Response) columnNames() []string {
	if len(r.rec.Columns) > 0 {
		names := make([]string, len(r.rec.Columns))
		for i, c := range r.rec.Columns {
			names[i] = c.Name
		}
		return names
	}
	if len(r.rec.Sample) > 0 {
		if m, ok := decodeRow(r.rec.Sample[0]).(map[string]any); ok {
			return slices.Sorted(maps.Keys(m))
		}
	}
	return nil
}

// built is a rendering of a Response within its byte budget.
type built struct {
	content *Structured
	summary string
	rows    []any
}

// Levels of string cutting the budget tries, in runes; 0 means none.
var cutLevels = []int{0, 1024, 256, 64, 16}

// minSampleRows is how many rows the budget tries to keep by cutting values
// harder before it drops rows.
const minSampleRows = 3

func (r *Response) build() built {
	r.once.Do(func() { r.st = r.fit() })
	return r.st.render(r.rows, r.enc)
}

// fit decides, once, what of the sample and metadata fits in the budget.
func (r *Response) fit() *buildState {
	meta := maps.Clone(r.rec.Metadata)
	if _, ok := meta["query"]; !ok && r.rec.Query.Text != "" && !r.queryStated {
		if meta == nil {
			meta = map[string]any{}
		}
		meta["query"] = r.rec.Query.Text
	}
	st := &buildState{r: r, meta: meta, columns: r.rec.Columns, name: r.name(), tableCols: r.columnNames(), fitting: true}
	if len(r.keys) > 0 {
		st.keys = make(map[string]bool, len(r.keys))
		for _, k := range r.keys {
			st.keys[k] = true
		}
	}
	defer func() { st.fitting = false }()

	// First make the fixed part (everything but rows) fit with room to spare.
	st.fitFixed(r.budget)

	n := len(r.rec.Sample)
	full := make([]any, n) // decoded lazily
	row := func(j int) any {
		if full[j] == nil {
			full[j] = decodeRow(r.rec.Sample[j])
		}
		return full[j]
	}
	want := min(n, minSampleRows)
	overhead := st.overhead()
	var (
		rows []any
		enc  []json.RawMessage
	)
	for i, level := range cutLevels {
		cut := make([]any, 0, n)
		cutEnc := make([]json.RawMessage, 0, n)
		changed := false
		used := overhead
		for j := range n {
			cr, ch := cutRow(row(j), level)
			b := mustJSON(cr)
			used += len(b) + jsonLen(st.tableRow(cr)) - 2 // the row, and its line in the text
			if j > 0 {
				used++ // comma
			}
			if used > r.budget {
				break
			}
			cut = append(cut, cr)
			cutEnc = append(cutEnc, b)
			changed = changed || ch
		}
		k := len(cut)
		if k == n || k >= want || i == len(cutLevels)-1 {
			rows, enc = cut, cutEnc
			st.valuesCut = st.valuesCut || changed
			st.reduced = k < n
			break
		}
	}
	// The estimate may be a few bytes off (digits of counts): check exactly.
	for len(rows) > 0 && st.modelBytes(st.render(rows, enc)) > r.budget {
		rows, enc = rows[:len(rows)-1], enc[:len(enc)-1]
		st.reduced = true
	}
	r.rows, r.enc = rows, enc
	return st
}

// buildState holds the shrinkable parts of what the model is given.
type buildState struct {
	r         *Response
	name      string // the link's
	meta      map[string]any
	columns   []Column
	tableCols []string        // the columns of the text's table
	keys      map[string]bool // the table's columns whose nulls it writes as null
	valuesCut bool            // a value (row or metadata) was cut
	reduced   bool            // sample rows were dropped
	colsCut   bool            // the column list was cut
	metaCut   bool            // caller metadata was dropped
	fitting   bool            // fit is measuring: the hints, outside the budget, are left out
}

// fitFixed shrinks caller metadata, name and columns until what the model
// is given without rows takes at most half the budget.
func (st *buildState) fitFixed(budget int) {
	limit := budget / 2
	size := func() int { return st.modelBytes(st.render(nil, nil)) }
	if size() <= limit {
		return
	}
	// Cut long values of the caller's metadata and the name.
	m := make(map[string]any, len(st.meta))
	for k, v := range st.meta {
		cv, ch := cutValue(v, 256)
		m[k] = cv
		st.valuesCut = st.valuesCut || ch
	}
	st.meta = m
	if n, ch := cutString(st.name, 256); ch {
		st.name, st.valuesCut = n, true
	}
	if size() <= limit {
		return
	}
	// Keep as many columns as fit.
	all := st.columns
	lo, hi := 0, len(all)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		st.columns, st.colsCut = all[:mid], mid < len(all)
		if size() <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	st.columns, st.colsCut = all[:lo], lo < len(all)
	if size() <= limit {
		return
	}
	// Then drop the caller's metadata.
	st.meta, st.metaCut = nil, len(st.meta) > 0
	// Last resort: a name whose characters JSON escapes (6 bytes each) can
	// still be too long: cut it further.
	for n := 128; size() > limit && n >= 8; n /= 2 {
		if c, ch := cutString(st.name, n); ch {
			st.name, st.valuesCut = c, true
		}
	}
}

// overhead returns an upper bound of the size of what the model is given
// without rows: the table's head is counted as if rows were present.
func (st *buildState) overhead() int {
	saved := st.reduced
	st.reduced = true // flags present make the estimate an upper bound
	n := st.modelBytes(st.render(nil, nil)) + len(`,"values_truncated":true`) + 2*len(" Long values are cut.") +
		jsonLen(st.tableHead()) - 2
	st.reduced = saved
	return n
}

// contentEnvelope is what an MCP SDK adds around the text and the link
// when it renders them as content: the type fields and the keys a
// resource_link always has (mcp-go writes an empty description).
const contentEnvelope = len(`[{"type":"text","text":},{"type":"resource_link","description":"","mimeType":""}]`)

// modelBytes returns the size of what the model is given with b: the
// structured content, the text and the link (see ModelBytes).
func (st *buildState) modelBytes(b built) int {
	link := st.link(len(b.rows))
	link.URL = "" // resource_link content has none
	return len(mustJSON(b.content)) + jsonLen(b.summary+st.table(b.rows)) + len(mustJSON(link)) + contentEnvelope
}

// jsonLen returns the length of s as a JSON string.
func jsonLen(s string) int { return len(mustJSON(s)) }

// render makes the content with rows, whose JSON encodings are enc.
func (st *buildState) render(rows []any, enc []json.RawMessage) built {
	r := st.r
	rec := r.rec
	sc := len(rows)
	summary := fmt.Sprintf("%s. %s.", rowsPhrase(rec.TotalCount), sampleSentence(sc, rec.TotalCount))
	for _, n := range r.notes {
		summary += " " + strings.TrimSpace(n)
		if !strings.HasSuffix(summary, ".") {
			summary += "."
		}
	}
	if len(r.hints) > 0 && !st.fitting {
		msgs := make([]string, len(r.hints))
		for i, h := range r.hints {
			msgs[i] = h.HintMessage()
		}
		summary += " Hints: " + strings.Join(msgs, " ")
	}
	if st.valuesCut {
		summary += " Long values are cut."
	}
	if int64(sc) < rec.TotalCount {
		// A partial answer's one line ends with the download of the
		// whole result (a whole answer needs none): the link a person
		// or a model asked for a file wants, the other formats named.
		// resource.url is the paged link, said once.
		summary += " " + DownloadLine(r.url)
	}

	var extra map[string]any
	if len(st.meta) > 0 {
		extra = maps.Clone(st.meta)
	}
	cols := make([]Column, len(st.columns))
	copy(cols, st.columns)
	meta := Metadata{
		TotalCount:        rec.TotalCount,
		SampleCount:       sc,
		Truncated:         int64(sc) < rec.TotalCount,
		Columns:           cols,
		ValuesTruncated:   st.valuesCut,
		SampleReduced:     st.reduced,
		ColumnsTruncated:  st.colsCut,
		MetadataTruncated: st.metaCut,
		Extra:             extra,
	}
	if !rec.Pinned && !rec.ExpiresAt.IsZero() {
		t := rec.ExpiresAt.UTC().Truncate(time.Second)
		meta.ExpiresAt = &t
	}
	if st.colsCut {
		meta.ColumnCount = len(rec.Columns)
	}
	results := append(make([]json.RawMessage, 0, len(enc)), enc...) // [] when empty, never null
	var hints []json.RawMessage
	if !st.fitting {
		hints = slices.Clone(r.hintsJSON)
	}
	return built{
		summary: summary,
		rows:    slices.Clone(rows),
		content: &Structured{
			Summary:  summary,
			Results:  results,
			Resource: ResourceLink{URI: r.uri, URL: r.url}, // the name is the link's
			Metadata: meta,
			Hints:    hints,
		},
	}
}

// DownloadLine is the sentence that gives the CSV export of the result at
// url and names the other formats.
func DownloadLine(url string) string {
	return "Download: " + url + "/export?format=csv (or format=ndjson, json, parquet)."
}

// nouns is n and its noun in the number n takes: "1 row", "2 rows".
func nouns(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func rowsPhrase(total int64) string {
	switch total {
	case 0:
		return "No rows match"
	case 1:
		return "1 row matches"
	}
	return fmt.Sprintf("%d rows match", total)
}

func sampleSentence(n int, total int64) string {
	switch {
	case total == 0:
		return "There is no sample"
	case int64(n) == total && n == 1:
		return "It is below"
	case int64(n) == total:
		return "All are below"
	case n == 0:
		return "No sample rows fit in this answer"
	case n == 1:
		return "1 sample row follows"
	}
	return fmt.Sprintf("%d sample rows follow", n)
}

// decodeRow decodes a raw row keeping numbers exact; a row that is not
// JSON becomes its text.
func decodeRow(b json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil {
		return string(b)
	}
	return v
}

// cutRow returns row with every value cut to level runes (0: unchanged)
// and whether anything changed.
func cutRow(row any, level int) (any, bool) {
	if level == 0 {
		return row, false
	}
	m, ok := row.(map[string]any)
	if !ok {
		return cutValue(row, level)
	}
	cm := make(map[string]any, len(m))
	changed := false
	for k, v := range m {
		cv, ch := cutValue(v, level)
		cm[k] = cv
		changed = changed || ch
	}
	return cm, changed
}

// cutValue cuts a string to level runes, and replaces an array or object
// whose JSON is longer than level bytes by its cut JSON text.
func cutValue(v any, level int) (any, bool) {
	switch x := v.(type) {
	case string:
		return cutString(x, level)
	case map[string]any, []any:
		b := mustJSON(x)
		if len(b) <= level || utf8.RuneCount(b) <= level {
			return v, false
		}
		s, _ := cutString(string(b), level)
		return s, true
	}
	return v, false
}

// cutString cuts s to n runes followed by TruncationMark.
func cutString(s string, n int) (string, bool) {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + TruncationMark, true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only caller metadata can fail to encode; show that in the size.
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

// Markdown table limits.
const (
	tableMaxColumns = 12
	tableCellRunes  = 60
)

// table returns the text's markdown table of rows, after the two line
// breaks that separate it from the summary; "" without rows or columns.
func (st *buildState) table(rows []any) string {
	if len(st.tableCols) == 0 || len(rows) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(st.tableHead())
	for _, row := range rows {
		sb.WriteString(st.tableRow(row))
	}
	if more := len(st.tableCols) - tableMaxColumns; more > 0 {
		fmt.Fprintf(&sb, "\n\n(%s not shown)", nouns(int64(more), "more column"))
	}
	return sb.String()
}

// shownColumns returns the columns the table shows.
func (st *buildState) shownColumns() []string {
	return st.tableCols[:min(len(st.tableCols), tableMaxColumns)]
}

// tableHead returns the table's head: GitHub markdown with a bare
// separator row, after the summary's two line breaks.
func (st *buildState) tableHead() string {
	cols := st.shownColumns()
	var sb strings.Builder
	sb.WriteString("\n\n|")
	for _, c := range cols {
		sb.WriteString(" " + cell(c) + " |")
	}
	sb.WriteString("\n|")
	for range cols {
		sb.WriteString("-|")
	}
	return sb.String()
}

// tableRow returns one row of the table, after its line break.
func (st *buildState) tableRow(row any) string {
	m, _ := row.(map[string]any)
	var sb strings.Builder
	sb.WriteString("\n|")
	for _, c := range st.shownColumns() {
		v := cell(m[c])
		if m[c] == nil && st.keys[c] {
			v = "null" // a group of rows without a value, named
		}
		sb.WriteString(" " + v + " |")
	}
	return sb.String()
}

func cell(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool, float64, int, int64:
		s = fmt.Sprint(x)
	default:
		s = string(mustJSON(x))
	}
	if n := utf8.RuneCountInString(s); n > tableCellRunes {
		s, _ = cutString(s, tableCellRunes-1)
		s = strings.TrimSuffix(s, TruncationMark) + "…"
	}
	return MarkdownText(s)
}
