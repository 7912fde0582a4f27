package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Part 1's figures of what the model pays in the small: the tool
// list every conversation carries, and the model-visible payload (text,
// resource_link and structuredContent) of small answers and of each part-1
// size, in bytes and in Claude tokens.

const (
	leanGroupQuery = "SELECT police_district, count(*) AS n GROUP BY police_district ORDER BY n DESC LIMIT 10"
	leanStarQuery  = "SELECT *" // 15 sample rows asked of the 22-column incidents
)

// interopDir is the interop folder of the module: the bench runs from the
// module's root (make bench) or from its own folder (go test).
func interopDir() string {
	for _, d := range []string{"interop", filepath.Join("..", "interop")} {
		if _, err := os.Stat(filepath.Join(d, "count_tokens.mjs")); err == nil {
			return d
		}
	}
	return "interop"
}

// claudeTokens counts b's tokens with the pinned @anthropic-ai/tokenizer
// (interop/package-lock.json) through Node (interop/count_tokens.mjs).
func claudeTokens(ctx context.Context, b []byte) (int, error) {
	dir := interopDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "tokenizer")); err != nil {
		return 0, fmt.Errorf("the tokenizer is not installed (cd interop && npm ci): %w", err)
	}
	tokenizerScript := filepath.Join(dir, "count_tokens.mjs")
	cmd := exec.CommandContext(ctx, "node", tokenizerScript)
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("node %s: %w", tokenizerScript, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// modelVisible is the JSON a model is shown of a tool result: its content
// and its structured content.
func modelVisible(res *mcp.CallToolResult) ([]byte, error) {
	c, sc, err := hostViews(res)
	return append(c, sc...), err
}

// hostViews are the two views of a tool result a host passes to its model,
// as JSON: the content (text and resource_link), for a host that shows
// text, and the structured content, for one that passes only that (Claude
// Code).
func hostViews(res *mcp.CallToolResult) (content, structured []byte, err error) {
	if content, err = json.Marshal(res.Content); err != nil {
		return nil, nil, err
	}
	structured, err = json.Marshal(res.StructuredContent)
	return content, structured, err
}

// lean measures the tool list and the small answers once.
func lean(ctx context.Context, cfg config, h *harness, rep *report) error {
	tools, err := h.st.mcp.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return err
	}
	rep.add("lean.tools.bytes", float64(len(b)))
	count := func(key string, b []byte) {
		n, err := claudeTokens(ctx, b)
		if err != nil {
			rep.tokenizer = err.Error()
			return
		}
		rep.add(key, float64(n))
	}
	count("lean.tools.tokens", b)
	// The SELECT * asks 15 sample rows of a larger result: the
	// first size with more rows than that. On the smallest size (10 rows)
	// the same query is a whole answer, which may use dualresp's larger
	// WholeByteBudget; it is reported beside it.
	larger := 0
	for i, n := range cfg.Sizes {
		if n > 15 {
			larger = i
			break
		}
	}
	for _, q := range []struct {
		key, soql string
		dataset   int
	}{{"group", leanGroupQuery, 0}, {"star", leanStarQuery, larger}, {"starwhole", leanStarQuery, 0}} {
		res, err := h.st.query(ctx, datasetID(q.dataset), q.soql)
		if err != nil {
			return err
		}
		vis, err := modelVisible(res)
		if err != nil {
			return err
		}
		rep.add("lean."+q.key+".bytes", float64(len(vis)))
		count("lean."+q.key+".tokens", vis)
		if q.key == "group" { // what a host shows: the larger of the two views
			c, sc, _ := hostViews(res)
			rep.add("lean.group.view.bytes", float64(max(len(c), len(sc))))
		}
	}
	for i, n := range cfg.Sizes {
		res, err := h.st.query(ctx, datasetID(i), queryAll)
		if err != nil {
			return err
		}
		vis, err := modelVisible(res)
		if err != nil {
			return err
		}
		count(keyPayload(n, "visible.tokens"), vis)
	}
	return nil
}
