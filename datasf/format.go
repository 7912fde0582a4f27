package datasf

import (
	"context"
	"net/http"
	"strings"
)

// Response formats of the text content. structuredContent is always present
// whatever the format.
const (
	formatAuto     = "auto"     // markdown (chat UIs show text)
	formatJSON     = "json"     // compact JSON text, for code
	formatMarkdown = "markdown" // a summary and a table
)

type formatKey struct{}

// withResponseFormat returns a context whose tool calls render text content
// in format ("json" or "markdown") unless a call's own format argument says
// otherwise. Streamable HTTP servers set it from the X-Response-Format header
// with formatFromHeader.
func withResponseFormat(ctx context.Context, format string) context.Context {
	return context.WithValue(ctx, formatKey{}, format)
}

// formatFromHeader is an mcp-go HTTP context function: it reads the
// X-Response-Format header (json or markdown).
func formatFromHeader(ctx context.Context, r *http.Request) context.Context {
	switch f := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Response-Format"))); f {
	case formatJSON, formatMarkdown:
		return withResponseFormat(ctx, f)
	}
	return ctx
}

// responseFormat picks the format of a call: its argument, else the
// context's, else auto.
func responseFormat(ctx context.Context, arg string) string {
	if arg != "" && arg != formatAuto {
		return arg
	}
	if f, ok := ctx.Value(formatKey{}).(string); ok {
		return f
	}
	return formatAuto
}
