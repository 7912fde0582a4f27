// Package hints finds what to tell a model whose SoQL query matched
// nothing: for each text literal its WHERE compares with (=, IN, LIKE,
// starts_with), the values that match it ignoring case, or else the
// column's closest values (see Find).
//
// It is imported by package datasf (query_datasf) only; it is not a
// library API.
package hints

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/rank"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Zero-result hints (zeros.go has the others). When a query matches no row and its WHERE compares
// text columns with literals (=, IN, LIKE, starts_with), the answer carries
// "hints" (dualresp.Response.WithHints renders them with the rest): for each literal, the values that match it case-insensitively,
// with their row counts (police_district = 'MISSION' finds nothing; the
// values are written 'Mission', 2,553 rows), or else the column's closest
// values. SoQL text comparison is case-sensitive, and a model guesses the
// case of a value more often than its spelling.
//
// The cost is bounded: hints are looked for only when the total is 0, with
// one request per column for at most maxHintColumns columns, each grouped
// by the column and limited to hintValueLimit rows, within hintTimeout.
// A failed request only means fewer hints.

const (
	maxHintColumns  = 2   // extra upstream requests, at most
	maxHintLiterals = 6   // literals hinted about
	maxHintValues   = 5   // values per list in a hint
	hintValueLimit  = 200 // distinct values fetched per column
	maxHintValueLen = 120 // characters of a value shown
	hintTimeout     = 10 * time.Second
)

// Empty reports whether resp answers "nothing": no row, or every
// aggregate of the query's last stage 0 or null in every row of a result
// small enough to be all in the sample (SELECT count(*) ... is one row
// saying 0, the same answer as no row).
func Empty(resp *dualresp.Response, q *soql.Query) bool {
	if resp.TotalCount() == 0 {
		return true
	}
	rec := resp.Record()
	if len(q.Stages) == 0 || int64(len(rec.Sample)) < resp.TotalCount() {
		return false
	}
	st := q.Stages[len(q.Stages)-1]
	keys := map[string]bool{} // output names of the items that are not aggregates
	aggregates := 0
	for _, it := range st.Selection {
		if it.Expr == nil {
			return false // *: no aggregate
		}
		if !soql.HasAggregate(it.Expr) {
			name := ""
			if it.Alias != nil {
				name = it.Alias.Name
			} else if id, ok := it.Expr.(*soql.Ident); ok {
				name = id.Name
			}
			keys[name] = true
			continue
		}
		aggregates++
	}
	if aggregates == 0 {
		return false
	}
	for _, raw := range rec.Sample {
		var row map[string]any
		if json.Unmarshal(raw, &row) != nil {
			return false
		}
		for k, v := range row {
			if keys[k] {
				continue
			}
			switch x := v.(type) {
			case nil:
			case float64:
				if x != 0 {
					return false
				}
			case string:
				if f, err := strconv.ParseFloat(x, 64); err != nil || f != 0 {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// Hint is what was found for one literal of a zero-result query: a
// dualresp.Hint.
type Hint struct {
	Column   string `json:"column"`
	Operator string `json:"operator"` // "=", "IN", "LIKE" or "starts_with"
	Literal  string `json:"literal"`
	// Matches are the values that match the literal when case is ignored,
	// most rows first.
	Matches []hintValue `json:"case_insensitive_matches"`
	// WrittenAs are the values that are the literal's words written
	// otherwise (spacing, punctuation, a plural: 'Larceny  Thefts' for
	// 'Larceny Theft'), when none matches it case-insensitively.
	WrittenAs []hintValue `json:"written_as,omitempty"`
	// Closest are the column's values nearest the literal, when none
	// matches it case-insensitively.
	Closest []hintValue `json:"closest_values"`
	Message string      `json:"message"`
}

// HintMessage is the sentence the answer's summary says.
func (h Hint) HintMessage() string { return h.Message }

type hintValue struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// hintTerm is one literal compared with a text column in WHERE.
type hintTerm struct {
	column, op, literal string
}

// hintTerms collects the literals the first stage's WHERE compares with
// text columns (not under NOT), at most maxHintLiterals, in source order.
func hintTerms(q *soql.Query, sc *socrata.Schema) []hintTerm {
	if len(q.Stages) == 0 || q.Stages[0].Where == nil {
		return nil
	}
	text := map[string]string{} // canonical name -> field name
	for _, c := range sc.Columns {
		if c.DataType != "" && socrata.ColumnType(c.DataType) == "text" {
			text[fuzzymatch.Canonical(c.FieldName)] = c.FieldName
		}
	}
	aliases := map[string]bool{}
	for _, it := range q.Stages[0].Selection {
		if it.Alias != nil {
			aliases[fuzzymatch.Canonical(it.Alias.Name)] = true
		}
	}
	column := func(e soql.Expr) string {
		for {
			p, ok := e.(*soql.Paren)
			if !ok {
				break
			}
			e = p.X
		}
		id, ok := e.(*soql.Ident)
		if !ok || id.System() || aliases[fuzzymatch.Canonical(id.Name)] {
			return ""
		}
		return text[fuzzymatch.Canonical(id.Name)]
	}
	str := func(e soql.Expr) (string, bool) {
		s, ok := e.(*soql.StringLit)
		if !ok {
			return "", false
		}
		return s.Value, true
	}
	var out []hintTerm
	seen := map[hintTerm]bool{}
	add := func(t hintTerm) {
		if t.column != "" && !seen[t] && len(out) < maxHintLiterals {
			seen[t] = true
			out = append(out, t)
		}
	}
	soql.Walk(q.Stages[0].Where, func(e soql.Expr) bool {
		switch n := e.(type) {
		case *soql.Unary:
			return n.Op != "not"
		case *soql.Binary:
			if n.Op == "=" {
				if lit, ok := str(n.Right); ok {
					add(hintTerm{column(n.Left), "=", lit})
				} else if lit, ok := str(n.Left); ok {
					add(hintTerm{column(n.Right), "=", lit})
				}
			}
		case *soql.In:
			if !n.Not {
				for _, x := range n.List {
					if lit, ok := str(x); ok {
						add(hintTerm{column(n.X), "IN", lit})
					}
				}
			}
		case *soql.Like:
			if lit, ok := str(n.Pattern); ok && !n.Not {
				add(hintTerm{column(n.X), "LIKE", lit})
			}
		case *soql.Call:
			if strings.EqualFold(n.Name.Name, "starts_with") && len(n.Args) == 2 {
				if lit, ok := str(n.Args[1]); ok {
					add(hintTerm{column(n.Args[0]), "starts_with", lit})
				}
			}
		}
		return true
	})
	return out
}

// hintQuery is the one request made for a column: its values with their
// row counts, those matching one of the literals case-insensitively first,
// then the most frequent, at most hintValueLimit.
func hintQuery(column string, terms []hintTerm) string {
	col := soql.Format(soql.Column(column))
	upper := "upper(" + col + ")"
	var conds []string
	var in []string
	for _, t := range terms {
		lit := "'" + strings.ReplaceAll(strings.ToUpper(t.literal), "'", "''") + "'"
		switch t.op {
		case "=", "IN":
			in = append(in, lit)
		case "LIKE":
			conds = append(conds, upper+" LIKE "+lit)
		case "starts_with":
			conds = append(conds, "starts_with("+upper+", "+lit+")")
		}
	}
	if len(in) > 0 {
		conds = append([]string{upper + " IN (" + strings.Join(in, ", ") + ")"}, conds...)
	}
	return fmt.Sprintf("SELECT %s AS hint_value, count(*) AS hint_count GROUP BY %s ORDER BY case(%s, 0, true, 1), hint_count DESC, %s LIMIT %d",
		col, col, strings.Join(conds, " OR "), col, hintValueLimit)
}

// likeRegexp turns a LIKE pattern into a case-insensitive regexp.
func likeRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?is)^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// matcher returns whether a value matches the term ignoring case; a LIKE
// pattern is compiled once.
func (t hintTerm) matcher() func(v string) bool {
	switch t.op {
	case "LIKE":
		return likeRegexp(t.literal).MatchString
	case "starts_with":
		prefix := strings.ToUpper(t.literal)
		return func(v string) bool { return strings.HasPrefix(strings.ToUpper(v), prefix) }
	}
	return func(v string) bool { return strings.EqualFold(v, t.literal) }
}

// Portal is what Find asks for rows: a *socrata.Client, or package
// portal's Reader, which follows a move the portal answers.
type Portal interface {
	Query(ctx context.Context, datasetID, soql string) (*socrata.Result, error)
}

// Find returns the hints that explain an empty answer of q on the
// dataset whose schema is sc (nil when there is nothing to say): a dataset
// without rows, with no request; the text literals' values (at most
// maxHintColumns requests, see textHints); the spatial filters' and
// comparisons' extents and ranges (one request, see profile); and, when
// no condition explains the zero alone, OFFSET, HAVING or the conditions
// counted apart (at most maxFallbackAsks requests, see fallbacks). A
// failed request only means fewer hints; it is logged to log at debug
// level.
func Find(ctx context.Context, client Portal, datasetID string, q *soql.Query, sc *socrata.Schema, log *slog.Logger) []dualresp.Hint {
	if sc.RowCount == 0 {
		return []dualresp.Hint{emptyDataset(datasetID)}
	}
	ctx, cancel := context.WithTimeout(ctx, hintTimeout)
	defer cancel()
	hints := textHints(ctx, client, datasetID, q, sc, log)
	if spatial, ranges := spatialAndRangeTerms(q, sc); len(spatial)+len(ranges) > 0 {
		hints = append(hints, profile(ctx, client, datasetID, sc, spatial, ranges, log)...)
	}
	for _, h := range hints {
		if explains(h) {
			return hints
		}
	}
	return append(hints, fallbacks(ctx, client, datasetID, q, log)...)
}

// explains reports whether a hint says which condition matches no row (a
// text literal found ignoring case matches rows by itself: it does not).
func explains(h dualresp.Hint) bool {
	if t, ok := h.(Hint); ok {
		return !strings.Contains(t.Message, "matches rows by itself")
	}
	return true
}

// textHints makes at most maxHintColumns requests for the text literals
// of q's WHERE, and returns their hints.
func textHints(ctx context.Context, client Portal, datasetID string, q *soql.Query, sc *socrata.Schema, log *slog.Logger) []dualresp.Hint {
	terms := hintTerms(q, sc)
	if len(terms) == 0 {
		return nil
	}
	var columns []string
	byColumn := map[string][]hintTerm{}
	for _, t := range terms {
		if _, ok := byColumn[t.column]; !ok {
			if len(columns) == maxHintColumns {
				continue
			}
			columns = append(columns, t.column)
		}
		byColumn[t.column] = append(byColumn[t.column], t)
	}
	var hints []dualresp.Hint
	for _, col := range columns {
		res, err := client.Query(ctx, datasetID, hintQuery(col, byColumn[col]))
		if err != nil {
			log.Debug("zero-result hints: request failed", "dataset", datasetID, "column", col, "err", err)
			continue
		}
		var values []hintValue
		for _, row := range res.Rows {
			v, ok := row["hint_value"].(string)
			if !ok {
				continue // null, or not text
			}
			n, _ := strconv.ParseInt(fmt.Sprint(row["hint_count"]), 10, 64)
			values = append(values, hintValue{Value: v, Count: n})
		}
		for _, t := range byColumn[col] {
			hints = append(hints, makeHint(t, values))
		}
	}
	return hints
}

// portalValue quotes a value the portal gave for a hint's message: the
// portal's words are data, so what markdown would read as a link, an
// image or a table cell ("![x](https://…)") is escaped as everywhere
// else (dualresp.MarkdownText); the hint's Matches and Closest keep the
// value as the portal wrote it.
func portalValue(v string) string { return "'" + dualresp.MarkdownText(v) + "'" }

// makeHint reads one literal's hint from the column's values.
func makeHint(t hintTerm, values []hintValue) Hint {
	h := Hint{Column: t.column, Operator: t.op, Literal: t.literal, Matches: []hintValue{}, Closest: []hintValue{}}
	matches := t.matcher()
	for _, v := range values {
		if matches(v.Value) && len(h.Matches) < maxHintValues {
			h.Matches = append(h.Matches, hintValue{clip(v.Value, maxHintValueLen), v.Count})
		}
	}
	lit := fmt.Sprintf("%s %s '%s'", t.column, t.op, t.literal)
	if t.op == "starts_with" {
		lit = fmt.Sprintf("starts_with(%s, '%s')", t.column, t.literal)
	}
	if len(h.Matches) > 0 {
		var parts []string
		exact := false
		for _, m := range h.Matches {
			parts = append(parts, fmt.Sprintf("%s (%s)", portalValue(m.Value), RowCount(m.Count)))
			exact = exact || (t.op != "LIKE" && t.op != "starts_with" && m.Value == t.literal)
		}
		if exact {
			h.Message = fmt.Sprintf("%s matches rows by itself (%s): another condition excludes them.", lit, strings.Join(parts, ", "))
		} else {
			h.Message = fmt.Sprintf("%s matches no row: text comparison is case-sensitive. Ignoring case it matches %s.", lit, strings.Join(parts, ", "))
		}
		return h
	}
	if t.op == "=" || t.op == "IN" {
		key := wordsKey(t.literal)
		var parts []string
		for _, v := range values {
			if key != "" && wordsKey(v.Value) == key && len(h.WrittenAs) < maxHintValues {
				h.WrittenAs = append(h.WrittenAs, hintValue{clip(v.Value, maxHintValueLen), v.Count})
				parts = append(parts, fmt.Sprintf("%s (%s)", portalValue(v.Value), RowCount(v.Count)))
			}
		}
		if len(parts) > 0 {
			h.Message = fmt.Sprintf("%s matches no row: the data writes it %s (spacing, punctuation or plural differ). Use the value exactly as written.", lit, strings.Join(parts, ", "))
			return h
		}
	}
	target := strings.ToLower(strings.Trim(t.literal, "%_"))
	type rankedValue struct {
		hintValue
		dist int
	}
	ranked := make([]rankedValue, len(values))
	for i, v := range values {
		ranked[i] = rankedValue{v, fuzzymatch.Distance(strings.ToLower(v.Value), target)}
	}
	slices.SortStableFunc(ranked, func(a, b rankedValue) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(b.Count, a.Count))
	})
	for _, v := range ranked[:min(len(ranked), maxHintValues)] {
		h.Closest = append(h.Closest, hintValue{clip(v.Value, maxHintValueLen), v.Count})
	}
	if len(h.Closest) == 0 {
		h.Message = fmt.Sprintf("%s matches no row, and %s has no values.", lit, t.column)
		return h
	}
	var parts []string
	for _, c := range h.Closest {
		parts = append(parts, fmt.Sprintf("%s (%s)", portalValue(c.Value), RowCount(c.Count)))
	}
	h.Message = fmt.Sprintf("%s matches no row, even ignoring case. Closest values of %s: %s.", lit, t.column, strings.Join(parts, ", "))
	return h
}

// wordsKey is a text value's words, lower-cased and stemmed (Snowball
// English, as the search's: "Thefts" is "theft"), joined by one space: two values with the
// same key are the same words written otherwise.
func wordsKey(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		words[i] = rank.Stem(w)
	}
	return strings.Join(words, " ")
}

// RowCount is n rows, with comma separators: "1 row", "2,553 rows".
func RowCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return Thousands(n) + " rows"
}

// Thousands writes n with comma separators: 2,553.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
