package spill

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultMaxBytes     = 25 * 1024
	DefaultMaxTokens    = 20_000
	DefaultPreviewItems = 5
	DefaultPreviewBytes = 4 * 1024
	// DefaultSweepInterval is how often, at most, a spill also drops the
	// blobs whose dualresp record is gone.
	DefaultSweepInterval = time.Minute
)

// BytesPerToken is the ratio used to estimate tokens from bytes.
const BytesPerToken = 4

// MetaKey is the _meta key of the spill information in a replaced result.
const MetaKey = "dualresp/spill"

// FieldName is the structured content field that carries the spill
// information when the tool's output schema allows extra fields.
const FieldName = "full_result"

// ToolOptions replaces Options for one tool. Zero fields inherit.
type ToolOptions struct {
	// MaxBytes and MaxTokens are the thresholds for this tool.
	MaxBytes  int
	MaxTokens int
	// PreviewItems is the number of preview items for this tool.
	PreviewItems int
	// Always spills every successful result of the tool, whatever its size.
	Always bool
	// Never disables spilling for the tool.
	Never bool
}

// Options configures a spiller (for example mcpgo.Spiller). The zero value
// means the defaults.
type Options struct {
	// MaxBytes spills results whose JSON encoding is larger. Default 25 KiB.
	MaxBytes int
	// MaxTokens spills results of more estimated tokens (bytes/4).
	// Default 20,000.
	MaxTokens int
	// PreviewItems is the most items the preview shows. Default 5.
	PreviewItems int
	// PreviewBytes bounds the preview's JSON (or text) size. Default 4 KiB.
	PreviewBytes int
	// Tools sets the options of single tools, by tool name.
	Tools map[string]ToolOptions
	// Expiration is how long a spilled result lives without access. Zero
	// means the dualresp Server's default.
	Expiration time.Duration
	// OutputSchema returns a tool's output schema (nil when it has none).
	// Default: the adapter's, for example the schema of the tool registered
	// on the mcp-go server that handles the call.
	OutputSchema func(ctx context.Context, tool string) json.RawMessage
	// Hint is appended to the summary the model reads, for example
	// "Analyze it with analyze_results.".
	Hint string
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Owner names the owner of a result spilled in ctx: its dualresp
	// record's Owner and whom the Store's per-owner bounds count it
	// against. Default (or when it returns ""): the caller of
	// dualresp.WithOwner, if any.
	Owner func(ctx context.Context) string
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
}
