package mcpgo

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Payload sources.
const (
	sourceStructured = "structured_content"
	sourceTextJSON   = "text_json"
	sourceText       = "text"
)

// textPartBytes is the approximate size of the rows of a plain text result.
const textPartBytes = 4096

// maxColumns bounds the columns recorded for a spilled result.
const maxColumns = 500

// payload is what a spill stores: rows for the REST API, and the original
// pieces needed to build a preview.
type payload struct {
	source string
	// object holds the top-level fields of an object payload; nil otherwise.
	object map[string]json.RawMessage
	// arrayKey names object's largest array field; "" when the payload is
	// an array itself or has no array.
	arrayKey string
	// items are the original items of the array (nil when there is none).
	items    []json.RawMessage
	hasArray bool
	// text is the whole text of a plain text payload.
	text    string
	rows    []json.RawMessage
	columns []dualresp.Column
}

// structuredJSON returns the structured content of res as compact JSON, or
// nil when there is none.
func structuredJSON(res *mcp.CallToolResult) []byte {
	var raw []byte
	switch {
	case res.StructuredContent != nil:
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil
		}
		raw = b
	case len(bytes.TrimSpace(res.RawStructuredContent)) > 0:
		raw = res.RawStructuredContent
	default:
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil || buf.String() == "null" {
		return nil
	}
	return buf.Bytes()
}

// textOf returns the concatenated text contents of res.
func textOf(res *mcp.CallToolResult) (string, bool) {
	var parts []string
	for _, c := range res.Content {
		switch t := c.(type) {
		case mcp.TextContent:
			parts = append(parts, t.Text)
		case *mcp.TextContent:
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

// extract turns a tool result into a payload; ok is false when the result
// holds nothing spillable (no structured content, no text).
func extract(res *mcp.CallToolResult) (*payload, bool) {
	if raw := structuredJSON(res); raw != nil {
		return fromJSON(raw, sourceStructured), true
	}
	text, ok := textOf(res)
	if !ok {
		return nil, false
	}
	trimmed := strings.TrimSpace(text)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid([]byte(trimmed)) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(trimmed)); err == nil {
			return fromJSON(buf.Bytes(), sourceTextJSON), true
		}
	}
	p := &payload{source: sourceText, text: text}
	for i, part := range splitText(text, textPartBytes) {
		row, _ := json.Marshal(struct {
			Part int    `json:"part"`
			Text string `json:"text"`
		}{i, part})
		p.rows = append(p.rows, row)
	}
	p.columns = []dualresp.Column{{Name: "part", Type: "number"}, {Name: "text", Type: "text"}}
	return p, true
}

// fromJSON builds the payload of a compact JSON value.
func fromJSON(raw []byte, source string) *payload {
	p := &payload{source: source}
	switch raw[0] {
	case '[':
		if err := json.Unmarshal(raw, &p.items); err == nil {
			p.hasArray = true
		}
	case '{':
		if err := json.Unmarshal(raw, &p.object); err == nil {
			best := -1
			for _, k := range slices.Sorted(maps.Keys(p.object)) {
				v := p.object[k]
				if len(v) > 0 && v[0] == '[' && len(v) > best {
					best, p.arrayKey = len(v), k
				}
			}
			if p.arrayKey != "" {
				if err := json.Unmarshal(p.object[p.arrayKey], &p.items); err == nil {
					p.hasArray = true
				}
			}
		}
	}
	if p.hasArray {
		p.rows = make([]json.RawMessage, len(p.items))
		for i, it := range p.items {
			p.rows[i] = asRow(it)
		}
	} else {
		p.rows = []json.RawMessage{asRow(raw)}
	}
	p.columns = dualresp.RowColumns(p.rows, maxColumns)
	return p
}

// asRow returns v when it is a JSON object, else {"value": v}.
func asRow(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '{' {
		return v
	}
	b := make([]byte, 0, len(v)+10)
	b = append(b, `{"value":`...)
	b = append(b, v...)
	return append(b, '}')
}

// splitText cuts s into parts of about size bytes, at line ends when there
// are any, never inside a UTF-8 sequence. The parts concatenate to s.
func splitText(s string, size int) []string {
	var parts []string
	for len(s) > size {
		cut := strings.LastIndexByte(s[:size], '\n') + 1
		if cut <= size/4 {
			cut = size
			for cut > 0 && !isRuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				cut = size
			}
		}
		parts = append(parts, s[:cut])
		s = s[cut:]
	}
	if len(s) > 0 || len(parts) == 0 {
		parts = append(parts, s)
	}
	return parts
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
