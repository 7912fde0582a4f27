package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
)

// Spiller keeps large mcp-go tool results out of the model's context: it
// stores the full result in a spill.Store and answers with a preview and a
// link to the rows, served by the dualresp Server's REST API (see package
// spill for the rules). It is safe for concurrent use.
type Spiller struct {
	results *dualresp.Server
	opts    spill.Options
	blobs   *spill.Store
	log     *slog.Logger

	mu        sync.Mutex
	lastSweep time.Time
}

// NewSpiller returns a Spiller that keeps full results in blobs and
// registers them with results, which must execute the query kind
// spill.Kind with blobs:
//
//	blobs := spill.NewStore(spill.StoreOptions{})
//	results, err := dualresp.New(dualresp.Options{
//		BaseURL:   "http://127.0.0.1:8765",
//		Executors: map[string]dualresp.Executor{spill.Kind: blobs},
//	})
//	…
//	sp := mcpgo.NewSpiller(results, blobs, spill.Options{})
//	s := server.NewMCPServer("name", "1.0", server.WithToolHandlerMiddleware(sp.Middleware()))
func NewSpiller(results *dualresp.Server, blobs *spill.Store, opts spill.Options) *Spiller {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = spill.DefaultMaxBytes
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = spill.DefaultMaxTokens
	}
	if opts.PreviewItems <= 0 {
		opts.PreviewItems = spill.DefaultPreviewItems
	}
	if opts.PreviewBytes <= 0 {
		opts.PreviewBytes = spill.DefaultPreviewBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OutputSchema == nil {
		opts.OutputSchema = registeredOutputSchema
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Spiller{results: results, opts: opts, blobs: blobs, log: log}
}

// Middleware returns the Spiller as a tool handler middleware, for
// server.WithToolHandlerMiddleware or MCPServer.Use.
func (sp *Spiller) Middleware() server.ToolHandlerMiddleware {
	return sp.Wrap
}

// Stats returns the number of spilled results held in memory and their
// total size in bytes.
func (sp *Spiller) Stats() (count int, bytes int64) { return sp.blobs.Stats() }

// Wrap returns handler with its large results spilled.
func (sp *Spiller) Wrap(handler server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := handler(ctx, req)
		if err != nil || res == nil || res.IsError {
			return res, err
		}
		return sp.Spill(ctx, req.Params.Name, res), nil
	}
}

// limits are the effective options for one tool.
type limits struct {
	maxBytes, maxTokens, previewItems int
	always, never                     bool
}

func (sp *Spiller) limits(tool string) limits {
	l := limits{maxBytes: sp.opts.MaxBytes, maxTokens: sp.opts.MaxTokens, previewItems: sp.opts.PreviewItems}
	if t, ok := sp.opts.Tools[tool]; ok {
		if t.MaxBytes > 0 {
			l.maxBytes = t.MaxBytes
		}
		if t.MaxTokens > 0 {
			l.maxTokens = t.MaxTokens
		}
		if t.PreviewItems > 0 {
			l.previewItems = t.PreviewItems
		}
		l.always, l.never = t.Always, t.Never
	}
	return l
}

// budget is the largest size in bytes a result may have without spilling.
func (l limits) budget() int { return min(l.maxBytes, l.maxTokens*spill.BytesPerToken) }

// Spill returns res unchanged when it is small enough for tool (or an
// error result), and otherwise stores it and returns its replacement. When
// storing fails, res is returned and the failure logged.
func (sp *Spiller) Spill(ctx context.Context, tool string, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || res.IsError {
		return res
	}
	l := sp.limits(tool)
	if l.never {
		return res
	}
	encoded, err := json.Marshal(res)
	if err != nil {
		sp.log.WarnContext(ctx, "spill: cannot encode a tool result; passing it through", "tool", tool, "err", err)
		return res
	}
	size := len(encoded)
	if !l.always && size <= l.maxBytes && estimateTokens(size) <= l.maxTokens {
		return res
	}
	out, err := sp.spill(ctx, tool, res, size, l)
	if err != nil {
		sp.log.WarnContext(ctx, "spill: cannot spill a large result; passing it through", "tool", tool, "bytes", size, "err", err)
		return res
	}
	sp.maybeSweep(ctx)
	return out
}

func estimateTokens(n int) int { return (n + spill.BytesPerToken - 1) / spill.BytesPerToken }

// info describes a spilled result to the model.
type info struct {
	URI             string `json:"uri"`
	URL             string `json:"url"`
	Tool            string `json:"tool"`
	OriginalBytes   int    `json:"original_bytes"`
	EstimatedTokens int    `json:"estimated_tokens"`
	ItemCount       *int   `json:"item_count,omitempty"`
	ArrayField      string `json:"array_field,omitempty"`
	PreviewCount    int    `json:"preview_count"`
	Source          string `json:"source"`
	ExpiresAt       any    `json:"expires_at"`
}

func (in info) asMap() map[string]any {
	var m map[string]any
	b, _ := json.Marshal(in)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&m)
	return m
}

func (sp *Spiller) spill(ctx context.Context, tool string, res *mcp.CallToolResult, size int, l limits) (*mcp.CallToolResult, error) {
	p, ok := extract(res)
	if !ok {
		return nil, errors.New("the result has neither structured content nor text")
	}
	var total int64
	for _, r := range p.rows {
		total += int64(len(r))
	}
	if total > sp.blobs.MaxBlobBytes() {
		return nil, fmt.Errorf("the result's rows take %d bytes, more than MaxBlobBytes (%d)", total, sp.blobs.MaxBlobBytes())
	}
	owner := ""
	if sp.opts.Owner != nil {
		owner = sp.opts.Owner(ctx)
	}
	if owner == "" {
		owner, _ = dualresp.OwnerFrom(ctx)
	}
	key, evicted, err := sp.blobs.PutOwned(owner, p.rows)
	if err != nil {
		return nil, err
	}
	sp.dropRecords(evicted)

	meta := map[string]any{
		"tool":             tool,
		"spilled":          true,
		"source":           p.source,
		"original_bytes":   size,
		"estimated_tokens": estimateTokens(size),
	}
	if p.hasArray {
		meta["item_count"] = len(p.items)
		if p.arrayKey != "" {
			meta["array_field"] = p.arrayKey
		}
	}
	if p.object != nil && p.arrayKey != "" {
		env := maps.Clone(p.object)
		delete(env, p.arrayKey)
		if b, err := json.Marshal(env); err == nil && len(b) <= 4096 {
			meta["envelope"] = json.RawMessage(b)
		}
	}
	sample := p.rows[:min(len(p.rows), l.previewItems)]
	resp, err := sp.results.CreateResponse(ctx, dualresp.Spec{
		Name:        fmt.Sprintf("%s result", tool),
		Description: fmt.Sprintf("Full result of the %s tool (%d bytes), kept because it was too large for the model", tool, size),
		Query:       dualresp.Query{Kind: spill.Kind, Text: key, Params: map[string]string{"tool": tool}},
		Owner:       owner,
		Columns:     p.columns,
		SampleSize:  max(len(sample), 1),
		Expiration:  sp.opts.Expiration,
		Metadata:    meta,
	})
	if err != nil {
		sp.blobs.Remove(key)
		return nil, err
	}
	sp.blobs.SetID(key, resp.ID())
	if !sp.blobs.Has(key) {
		// Evicted by a concurrent spill before the record existed.
		_ = sp.results.Delete(context.WithoutCancel(ctx), resp.ID())
		return nil, spill.ErrGone
	}

	in := info{
		URI: resp.URI(), URL: resp.URL(), Tool: tool, OriginalBytes: size,
		EstimatedTokens: estimateTokens(size), ArrayField: p.arrayKey, Source: p.source,
	}
	if p.hasArray {
		n := len(p.items)
		in.ItemCount = &n
	}
	if exp := resp.ExpiresAt(); !exp.IsZero() {
		in.ExpiresAt = exp.UTC().Format(time.RFC3339)
	}
	schema := sp.opts.OutputSchema(ctx, tool)
	b := &builder{sp: sp, tool: tool, res: res, p: p, in: in, resp: resp, l: l, schema: schema}
	return b.build()
}

// builder makes the replacement of a spilled result.
type builder struct {
	sp     *Spiller
	tool   string
	res    *mcp.CallToolResult
	p      *payload
	in     info
	resp   *dualresp.Response
	l      limits
	schema json.RawMessage
}

func (b *builder) build() (*mcp.CallToolResult, error) {
	budget := b.l.budget()
	n := b.previewCount()
	var out *mcp.CallToolResult
	// Fewer preview items (then shorter strings) until the result fits.
	for _, cut := range []int{0, 1024, 256, 64} {
		for k := n; ; k = k / 2 {
			out = b.render(k, cut)
			if enc, err := json.Marshal(out); err == nil && len(enc) <= budget {
				return out, nil
			}
			if k == 0 {
				break
			}
		}
	}
	b.sp.log.Warn("spill: the replacement does not fit the threshold", "tool", b.tool)
	return out, nil
}

// previewCount returns how many items fit in PreviewBytes (at most the
// tool's preview items).
func (b *builder) previewCount() int {
	if !b.p.hasArray {
		return 0
	}
	n, used := 0, 2
	for _, it := range b.p.items[:min(len(b.p.items), b.l.previewItems)] {
		used += len(it) + 1
		if used > b.sp.opts.PreviewBytes && n > 0 {
			break
		}
		n++
	}
	return n
}

// render builds the replacement with k preview items and strings cut to
// cut runes (0: no cut).
func (b *builder) render(k int, cut int) *mcp.CallToolResult {
	p := b.p
	in := b.in
	var preview []json.RawMessage
	if p.hasArray {
		preview = p.items[:min(k, len(p.items))]
		if cut > 0 {
			preview = cutItems(preview, cut)
		}
		in.PreviewCount = len(preview)
	}
	var previewText string
	if !p.hasArray {
		limit := b.sp.opts.PreviewBytes
		if cut > 0 {
			limit = min(limit, cut*4)
		}
		src := p.text
		if p.source != sourceText {
			src = string(p.rows[0])
		}
		previewText = truncateText(src, limit)
	}

	summary := b.summary(len(preview), previewText != "")
	var sc any
	switch {
	case len(b.schema) > 0 && p.source == sourceStructured:
		sc = b.shapedContent(preview, cut)
	case len(b.schema) > 0:
		// A tool with an output schema that answered without structured
		// content: adding some of another shape would fail validation.
	default:
		var pv any
		if p.hasArray {
			pv = decode(mustJSON(preview))
		} else {
			pv = previewText
		}
		sc = map[string]any{
			"summary": summary,
			"preview": pv,
			"resource": map[string]any{
				"uri": in.URI, "url": in.URL, "name": b.resp.Record().Name, "mimeType": dualresp.MIMEType,
			},
			"metadata": in.asMap(),
		}
	}
	text := summary
	if p.hasArray && len(preview) > 0 {
		text += "\n\nPreview:\n" + string(mustJSON(preview))
	} else if previewText != "" {
		text += "\n\nPreview:\n" + previewText
	}
	out := &mcp.CallToolResult{
		Content: []mcp.Content{
			mcp.NewTextContent(text),
			mcp.NewResourceLink(in.URI, b.resp.Record().Name,
				fmt.Sprintf("Full result: JSON pages at %s?offset=0&limit=%d", in.URL, dualresp.DefaultPageLimit), dualresp.MIMEType),
		},
		StructuredContent: sc,
	}
	fields := map[string]any{}
	if b.res.Meta != nil {
		maps.Copy(fields, b.res.Meta.AdditionalFields)
		out.Meta = &mcp.Meta{ProgressToken: b.res.Meta.ProgressToken}
	} else {
		out.Meta = &mcp.Meta{}
	}
	fields[spill.MetaKey] = in.asMap()
	out.Meta.AdditionalFields = fields
	return out
}

// shapedContent returns the original structured content with its largest
// array cut to the preview, long strings cut when cut > 0, and the spill
// information added when the schema allows it.
func (b *builder) shapedContent(preview []json.RawMessage, cut int) any {
	p := b.p
	if p.object == nil {
		if p.hasArray {
			return decode(mustJSON(preview))
		}
		v := decode(p.rows[0])
		if cut > 0 {
			v = cutStrings(v, cut)
		}
		return v
	}
	obj := make(map[string]any, len(p.object)+1)
	for k, v := range p.object {
		if k == p.arrayKey {
			obj[k] = decode(mustJSON(preview))
			continue
		}
		dv := decode(v)
		if cut > 0 {
			dv = cutStrings(dv, cut)
		}
		obj[k] = dv
	}
	if allowsField(b.schema, spill.FieldName) {
		obj[spill.FieldName] = b.withPreviewCount(len(preview))
	}
	return obj
}

func (b *builder) withPreviewCount(n int) map[string]any {
	in := b.in
	in.PreviewCount = n
	m := in.asMap()
	m["summary"] = b.summary(n, false)
	return m
}

func (b *builder) summary(previewItems int, previewText bool) string {
	in := b.in
	var sb strings.Builder
	fmt.Fprintf(&sb, "The result of %s is too large to show in full (%d bytes, about %d tokens)", in.Tool, in.OriginalBytes, in.EstimatedTokens)
	if in.ItemCount != nil {
		where := "items"
		if in.ArrayField != "" {
			where = fmt.Sprintf("items in %q", in.ArrayField)
		}
		fmt.Fprintf(&sb, "; it has %d %s", *in.ItemCount, where)
	}
	sb.WriteString(". ")
	switch {
	case previewItems > 0:
		fmt.Fprintf(&sb, "The first %d are shown. ", previewItems)
	case previewText:
		sb.WriteString("Its beginning is shown. ")
	}
	fmt.Fprintf(&sb, "Full result: %s (JSON pages: %s?offset=0&limit=%d; resource %s).", in.URL, in.URL, dualresp.DefaultPageLimit, in.URI)
	if b.sp.opts.Hint != "" {
		sb.WriteString(" " + b.sp.opts.Hint)
	}
	return sb.String()
}

// allowsField reports whether an object schema accepts an extra property
// named name: additionalProperties is absent or true and name is not one
// of its declared properties.
func allowsField(schema json.RawMessage, name string) bool {
	var s struct {
		Type                 any                        `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
		PatternProperties    json.RawMessage            `json:"patternProperties"`
		UnevaluatedProps     json.RawMessage            `json:"unevaluatedProperties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return false
	}
	if _, ok := s.Properties[name]; ok {
		return false
	}
	if len(s.PatternProperties) > 0 || len(s.UnevaluatedProps) > 0 {
		return false
	}
	ap := strings.TrimSpace(string(s.AdditionalProperties))
	return ap == "" || ap == "true" || ap == "{}"
}

// registeredOutputSchema returns the output schema of the tool registered
// on the MCPServer handling the call.
func registeredOutputSchema(ctx context.Context, tool string) json.RawMessage {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	t := srv.GetTool(tool)
	if t == nil {
		return nil
	}
	if len(t.Tool.RawOutputSchema) > 0 {
		return t.Tool.RawOutputSchema
	}
	if t.Tool.OutputSchema.Type == "" && len(t.Tool.OutputSchema.Properties) == 0 {
		return nil
	}
	b, err := json.Marshal(t.Tool.OutputSchema)
	if err != nil {
		return nil
	}
	return b
}

// dropRecords deletes the dualresp records of evicted blobs, so that their
// links answer 404 rather than failing.
func (sp *Spiller) dropRecords(evicted []spill.Evicted) {
	for _, b := range evicted {
		if b.ID == "" {
			continue
		}
		if err := sp.results.Delete(context.Background(), b.ID); err != nil &&
			!errors.Is(err, dualresp.ErrNotFound) && !errors.Is(err, dualresp.ErrExpired) {
			sp.log.Warn("spill: cannot delete the record of an evicted result", "id", b.ID, "err", err)
		}
		sp.log.Debug("spill: evicted a spilled result", "id", b.ID, "bytes", b.Bytes)
	}
}

// maybeSweep runs Sweep when DefaultSweepInterval has passed since the last.
func (sp *Spiller) maybeSweep(ctx context.Context) {
	now := sp.opts.Now()
	sp.mu.Lock()
	due := now.Sub(sp.lastSweep) >= spill.DefaultSweepInterval
	if due {
		sp.lastSweep = now
	}
	sp.mu.Unlock()
	if due {
		if _, err := sp.Sweep(context.WithoutCancel(ctx)); err != nil {
			sp.log.WarnContext(ctx, "spill: sweep failed", "err", err)
		}
	}
}

// Sweep drops the spilled results whose dualresp record is gone or has
// expired, and returns how many it dropped.
func (sp *Spiller) Sweep(ctx context.Context) (int, error) {
	n := 0
	for key, id := range sp.blobs.IDs() {
		if id == "" {
			continue
		}
		_, err := sp.results.Resource(ctx, id)
		switch {
		case errors.Is(err, dualresp.ErrNotFound), errors.Is(err, dualresp.ErrExpired):
			sp.blobs.Remove(key)
			n++
		case err != nil:
			return n, err
		}
	}
	return n, nil
}

// decode decodes JSON keeping numbers exact.
func decode(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return v
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// cutItems cuts the long strings of each item to n runes.
func cutItems(items []json.RawMessage, n int) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = mustJSON(cutStrings(decode(it), n))
	}
	return out
}

// cutStrings cuts every string in v longer than n runes, ending it in
// dualresp.TruncationMark.
func cutStrings(v any, n int) any {
	switch x := v.(type) {
	case string:
		if utf8.RuneCountInString(x) <= n {
			return x
		}
		return string([]rune(x)[:n]) + dualresp.TruncationMark
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cutStrings(e, n)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cutStrings(e, n)
		}
		return out
	}
	return v
}

// truncateText returns s cut to at most n bytes at a rune boundary, with a
// mark when cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + dualresp.TruncationMark
}
