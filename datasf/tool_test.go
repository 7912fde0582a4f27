package datasf

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/validate"
)

// wantLimits are the limits the tools' input schemas must state, keyed
// tool.argument.keyword, each written as its constant. Every limit keyword
// in a schema needs an entry here, and every entry a keyword.
var wantLimits = map[string]any{
	"search_datasf.query.minLength": 1,
	"search_datasf.query.maxLength": MaxSearchQuery,
	"search_datasf.limit.minimum":   1,
	"search_datasf.limit.maximum":   MaxSearchLimit,
	"search_datasf.limit.default":   DefaultSearchLimit,

	"list_datasf.category.maxLength": MaxCategory,
	"list_datasf.limit.minimum":      1,
	"list_datasf.limit.maximum":      MaxListLimit,
	"list_datasf.limit.default":      DefaultListLimit,

	"query_datasf.soql.minLength":      1,
	"query_datasf.soql.maxLength":      MaxSoQL,
	"query_datasf.sample_size.minimum": 1,
	"query_datasf.sample_size.maximum": MaxSampleSize,

	"list_results.limit.minimum":  1,
	"list_results.limit.maximum":  MaxListResultsLimit,
	"list_results.limit.default":  DefaultListResultsLimit,
	"list_results.offset.minimum": 0,
	"list_results.offset.maximum": MaxResultsPerOwner,
	"list_results.offset.default": 0,

	"analyze_results.sql.minLength":         1,
	"analyze_results.sql.maxLength":         MaxAnalyzeSQL,
	"analyze_results.results.minProperties": 1,
	"analyze_results.results.maxProperties": MaxAnalyzeResults,

	"result_page.result.minLength":  1,
	"result_page.result.maxLength":  MaxResultRef,
	"result_page.offset.minimum":    0,
	"result_page.offset.maximum":    MaxResultPageOffset,
	"result_page.offset.default":    0,
	"result_page.limit.minimum":     1,
	"result_page.limit.maximum":     MaxResultPageLimit,
	"result_page.limit.default":     DefaultResultPageLimit,
	"result_page.sort_by.maxLength": MaxSortField,
}

// limitKeywords are the schema keywords that wantLimits must cover.
var limitKeywords = []string{"minLength", "maxLength", "minimum", "maximum", "minProperties", "maxProperties", "pattern"}

// patternExamples are valid values of each schema pattern.
var patternExamples = map[string]string{validate.DatasetIDPattern: "wg3w-h783"}

type property map[string]any

type objectSchema struct {
	Properties map[string]property `json:"properties"`
	Required   []string            `json:"required"`
}

func inputSchema(t *testing.T, tl tool) objectSchema {
	t.Helper()
	var s objectSchema
	if err := json.Unmarshal(tl.def.RawInputSchema, &s); err != nil {
		t.Fatalf("%s input schema: %v", tl.def.Name, err)
	}
	return s
}

// TestToolListIsComplete checks that each tool's schema and input type
// describe the same arguments, in the same order.
func TestToolListIsComplete(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tl := range (&toolServer{}).toolList() {
		name := tl.def.Name
		if seen[name] {
			t.Errorf("tool %s is listed twice", name)
		}
		seen[name] = true
		var fields []string
		for i := range tl.in.NumField() {
			fields = append(fields, validate.JSONName(tl.in.Field(i)))
		}
		if diff := cmp.Diff(fields, tl.input.PropertyOrder); diff != "" {
			t.Errorf("%s: input schema properties vs the fields of %s (-fields +schema):\n%s", name, tl.in.Name(), diff)
		}
		props := slices.Sorted(maps.Keys(inputSchema(t, tl).Properties))
		if diff := cmp.Diff(slices.Sorted(slices.Values(fields)), props); diff != "" {
			t.Errorf("%s: published input schema properties vs the fields of %s (-fields +schema):\n%s", name, tl.in.Name(), diff)
		}
		if tl.handler == nil || tl.check == nil {
			t.Errorf("%s has no handler", name)
		}
	}
	if len(seen) != 7 {
		t.Errorf("toolList has %d tools; want 7 (update this test, the goldens and the docs when adding one)", len(seen))
	}
}

// TestLimitsAreTheConstants walks every tool's input schema: each limit it
// states is the constant in wantLimits, and validation accepts exactly what
// the limit allows (the boundary value and not one past it), for every
// argument and keyword. Required arguments, types, enums and defaults are
// checked the same way.
func TestLimitsAreTheConstants(t *testing.T) {
	t.Parallel()
	found := map[string]bool{}
	total := 0
	for _, tl := range (&toolServer{}).toolList() {
		name := tl.def.Name
		schema := inputSchema(t, tl)
		c := &limitChecker{t: t, tool: tl, schema: schema}
		c.base = c.validArgs()
		c.accept("the minimal valid arguments", c.base)
		for _, req := range schema.Required {
			c.reject("without "+req, c.without(req), req)
		}
		for _, arg := range slices.Sorted(maps.Keys(schema.Properties)) {
			p := schema.Properties[arg]
			for _, kw := range limitKeywords {
				v, ok := p[kw]
				if !ok {
					continue
				}
				key := name + "." + arg + "." + kw
				found[key] = true
				if want, ok := wantLimits[key]; !ok {
					t.Errorf("%s = %v in the schema has no constant in wantLimits", key, v)
				} else if jsonNumber(v) != fmt.Sprint(want) {
					t.Errorf("%s = %v in the schema; want %v (its constant)", key, v, want)
				}
			}
			if p["type"] == "integer" {
				if d, ok := p["default"]; ok {
					key := name + "." + arg + ".default"
					found[key] = true
					if want := wantLimits[key]; jsonNumber(d) != fmt.Sprint(want) {
						t.Errorf("%s = %v in the schema; want %v (its constant)", key, d, want)
					}
				}
			}
			c.property(arg, p)
		}
		t.Logf("%s: %d arguments, %d checks of validation against the schema", name, len(schema.Properties), c.checks)
		total += c.checks
	}
	for key := range wantLimits {
		if !found[key] {
			t.Errorf("wantLimits has %s, which no tool's schema states", key)
		}
	}
	t.Logf("%d limits tied to constants; %d validation checks in all", len(found), total)
}

// limitChecker runs one tool's validation (decode and validate, as its
// handler does) with arguments derived from its schema.
type limitChecker struct {
	t      *testing.T
	tool   tool
	schema objectSchema
	base   map[string]any
	checks int
}

// validArgs builds the smallest valid arguments from the schema: its
// required properties at their lower bounds.
func (c *limitChecker) validArgs() map[string]any {
	args := map[string]any{}
	for _, req := range c.schema.Required {
		p := c.schema.Properties[req]
		switch p["type"] {
		case "string":
			if req == "dataset_id" {
				args[req] = patternExamples[validate.DatasetIDPattern]
			} else if pat, ok := p["pattern"].(string); ok {
				ex, ok := patternExamples[pat]
				if !ok {
					c.t.Fatalf("%s.%s: no example of pattern %s in patternExamples", c.tool.def.Name, req, pat)
				}
				args[req] = ex
			} else {
				args[req] = strings.Repeat("a", max(num(p["minLength"]), 1))
			}
		case "integer":
			args[req] = num(p["minimum"])
		case "boolean":
			args[req] = true
		case "object":
			args[req] = entries(max(num(p["minProperties"]), 1))
		default:
			c.t.Fatalf("%s.%s: no valid value for type %v", c.tool.def.Name, req, p["type"])
		}
	}
	return args
}

func (c *limitChecker) with(arg string, v any) map[string]any {
	args := maps.Clone(c.base)
	args[arg] = v
	return args
}

func (c *limitChecker) without(arg string) map[string]any {
	args := maps.Clone(c.base)
	delete(args, arg)
	return args
}

func (c *limitChecker) accept(what string, args map[string]any) {
	c.t.Helper()
	c.checks++
	if err := c.tool.check(args); err != nil {
		c.t.Errorf("%s %s: refused (%v); the schema allows it", c.tool.def.Name, what, err)
	}
}

func (c *limitChecker) reject(what string, args map[string]any, field string) {
	c.t.Helper()
	c.checks++
	err := c.tool.check(args)
	if err == nil {
		c.t.Errorf("%s %s: accepted; the schema does not allow it", c.tool.def.Name, what)
		return
	}
	res := errorResult(err, false)
	var e struct {
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
		Details   struct {
			Field  string   `json:"field"`
			Fields []string `json:"fields"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &e); err != nil {
		c.t.Fatalf("%s %s: error text %q: %v", c.tool.def.Name, what, resultText(res), err)
	}
	if e.ErrorType != "validation" || (e.Details.Field != field && !slices.Contains(e.Details.Fields, field)) || !strings.Contains(e.Error, field) {
		c.t.Errorf("%s %s: error %s; want a validation error naming %s", c.tool.def.Name, what, resultText(res), field)
	}
}

// property checks one argument's keywords against validation.
func (c *limitChecker) property(arg string, p property) {
	c.t.Helper()
	for kw := range p {
		switch kw {
		case "type", "description", "default", "enum", "pattern", "additionalProperties",
			"minLength", "maxLength", "minimum", "maximum", "minProperties", "maxProperties":
		default:
			c.t.Errorf("%s.%s: keyword %q is not checked by this test; add a check", c.tool.def.Name, arg, kw)
		}
	}
	if d, ok := p["default"]; ok {
		c.accept(fmt.Sprintf("with %s = its default %v", arg, d), c.with(arg, d))
	}
	switch p["type"] {
	case "string":
		c.reject(arg+" a number", c.with(arg, 42), arg)
		if n, ok := p["minLength"]; ok {
			lo := num(n)
			for _, r := range []string{"a", "é", "🚒"} {
				c.accept(fmt.Sprintf("%s of %d×%q (minLength)", arg, lo, r), c.with(arg, strings.Repeat(r, lo)))
				c.reject(fmt.Sprintf("%s of %d×%q (minLength-1)", arg, lo-1, r), c.with(arg, strings.Repeat(r, lo-1)), arg)
			}
		}
		if n, ok := p["maxLength"]; ok {
			hi := num(n)
			for _, r := range []string{"a", "é", "🚒"} {
				c.accept(fmt.Sprintf("%s of %d×%q (maxLength)", arg, hi, r), c.with(arg, strings.Repeat(r, hi)))
				c.reject(fmt.Sprintf("%s of %d×%q (maxLength+1)", arg, hi+1, r), c.with(arg, strings.Repeat(r, hi+1)), arg)
			}
		}
		pat, ok := p["pattern"].(string)
		if arg == "dataset_id" {
			// Not in the schema (it costs the model a regular expression
			// in every conversation); the validation still checks it.
			pat, ok = validate.DatasetIDPattern, true
		}
		if ok {
			re := regexp.MustCompile(pat)
			ex := patternExamples[pat]
			for _, v := range []string{ex, strings.ToUpper(ex), ex + "\n", " " + ex, ex[1:], ex + "x", "", "../../etc", strings.ReplaceAll(ex, "-", "_"), ex[:len(ex)-1] + "é"} {
				if re.MatchString(v) {
					c.accept(fmt.Sprintf("%s %q (matches the pattern)", arg, v), c.with(arg, v))
				} else {
					c.reject(fmt.Sprintf("%s %q (does not match the pattern)", arg, v), c.with(arg, v), arg)
				}
			}
		}
		if enum, ok := p["enum"].([]any); ok {
			for _, v := range enum {
				c.accept(fmt.Sprintf("%s %v (in enum)", arg, v), c.with(arg, v))
				c.reject(fmt.Sprintf("%s %v! (not in enum)", arg, v), c.with(arg, fmt.Sprint(v)+"!"), arg)
			}
		}
	case "integer":
		c.reject(arg+" a string", c.with(arg, "5"), arg)
		c.reject(arg+" 1.5", c.with(arg, 1.5), arg)
		lo, hi := num(p["minimum"]), num(p["maximum"])
		c.accept(fmt.Sprintf("%s %d (minimum)", arg, lo), c.with(arg, lo))
		c.reject(fmt.Sprintf("%s %d (minimum-1)", arg, lo-1), c.with(arg, lo-1), arg)
		c.accept(fmt.Sprintf("%s %d (maximum)", arg, hi), c.with(arg, hi))
		c.reject(fmt.Sprintf("%s %d (maximum+1)", arg, hi+1), c.with(arg, hi+1), arg)
		if lo > 0 {
			c.reject(arg+" 0 (zero is a value, not unset)", c.with(arg, 0), arg)
		}
	case "boolean":
		c.accept(arg+" false", c.with(arg, false))
		c.reject(arg+" a string", c.with(arg, "yes"), arg)
	case "object":
		c.reject(arg+" a string", c.with(arg, "x"), arg)
		lo, hi := num(p["minProperties"]), num(p["maxProperties"])
		c.accept(fmt.Sprintf("%s of %d entries (minProperties)", arg, lo), c.with(arg, entries(lo)))
		c.reject(fmt.Sprintf("%s of %d entries (minProperties-1)", arg, lo-1), c.with(arg, entries(lo-1)), arg)
		c.accept(fmt.Sprintf("%s of %d entries (maxProperties)", arg, hi), c.with(arg, entries(hi)))
		c.reject(fmt.Sprintf("%s of %d entries (maxProperties+1)", arg, hi+1), c.with(arg, entries(hi+1)), arg)
		if ap, ok := p["additionalProperties"].(map[string]any); ok && ap["type"] == "string" {
			c.reject(arg+" with a number entry", c.with(arg, map[string]any{"t": 1}), arg)
		}
	default:
		c.t.Errorf("%s.%s: type %v is not checked by this test; add a check", c.tool.def.Name, arg, p["type"])
	}
}

// jsonNumber prints a value of a decoded schema as its constant prints: a
// whole number without an exponent.
func jsonNumber(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(v)
}

// num reads a JSON number of a schema.
func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// entries is an object of n string entries.
func entries(n int) map[string]any {
	m := map[string]any{}
	for i := range max(n, 0) {
		m[fmt.Sprintf("t%d", i)] = "x"
	}
	return m
}

func resultText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	if tc == nil {
		return ""
	}
	return tc.Text
}

// TestInputValidate checks the input types' validate tags as the tools
// apply them (validate.Struct); zero is not "unset".
func TestInputValidate(t *testing.T) {
	t.Parallel()
	zero, one := 0, 1
	tests := []struct {
		name  string
		in    any
		field string // "" means valid
	}{
		{"search ok", &SearchInput{Query: "x"}, ""},
		{"search limit 0", &SearchInput{Query: "x", Limit: &zero}, "limit"},
		{"search limit 1", &SearchInput{Query: "x", Limit: &one}, ""},
		{"list ok", &ListInput{}, ""},
		{"list limit 0", &ListInput{Limit: &zero}, "limit"},
		{"schema ok", &SchemaInput{DatasetID: "wg3w-h783"}, ""},
		{"schema bad", &SchemaInput{DatasetID: "wg3w"}, "dataset_id"},
		{"query ok", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT *"}, ""},
		{"query sample 0", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT *", SampleSize: &zero}, "sample_size"},
		{"results ok", &ListResultsInput{}, ""},
		{"results format", &ListResultsInput{Format: "xml"}, "format"},
		{"analyze ok", &AnalyzeInput{SQL: "SELECT 1", Results: map[string]string{"t": "x"}}, ""},
		{"analyze no results", &AnalyzeInput{SQL: "SELECT 1"}, "results"},
		{"analyze empty results", &AnalyzeInput{SQL: "SELECT 1", Results: map[string]string{}}, "results"},
		{"analyze blank sql", &AnalyzeInput{SQL: " \n", Results: map[string]string{"t": "x"}}, "sql"},
		{"page ok", &ResultPageInput{Result: "resource://x", SortBy: "a", Order: "desc"}, ""},
		{"page blank result", &ResultPageInput{Result: "  "}, "result"},
		{"page limit 0", &ResultPageInput{Result: "x", Limit: &zero}, "limit"},
		{"page offset 0", &ResultPageInput{Result: "x", Offset: &zero}, ""},
		{"page bad order", &ResultPageInput{Result: "x", SortBy: "a", Order: "up"}, "order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validate.Struct(tt.in)
			if tt.field == "" {
				if err != nil {
					t.Errorf("validate.Struct(%+v) = %v; want nil", tt.in, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.field+" ") {
				t.Errorf("validate.Struct(%+v) = %v; want an error about %s", tt.in, err, tt.field)
			}
		})
	}
}

// Every tool's MCP handler checks its arguments before the typed handler
// runs: an unknown argument is refused with the words of
// the tool's check, on a server that has nothing else to offer.
func TestHandlersCheckTheirArguments(t *testing.T) {
	t.Parallel()
	for _, tl := range (&toolServer{}).toolList() {
		req := mcp.CallToolRequest{}
		req.Params.Name = tl.def.Name
		req.Params.Arguments = map[string]any{"no_such_argument": 1}
		res, err := tl.handler(t.Context(), req)
		want := errorResult(tl.check(req.Params.Arguments), false)
		if err != nil || !res.IsError || resultText(res) != resultText(want) {
			t.Errorf("%s(no_such_argument: 1) = %v, %v; want %s", tl.def.Name, resultText(res), err, resultText(want))
		}
	}
}
