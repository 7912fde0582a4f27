package mcpgo_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/adaptertest"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// TestContentWithinModelBytes checks that what this adapter gives a model
// (its content, the text and the resource_link, and the structured
// content) is at most Response.ModelBytes, which dualresp keeps within the
// byte budget (dualresp's TestByteBudgetProperty): the envelope mcp-go adds
// around the text and the link is the one ModelBytes counts.
func TestContentWithinModelBytes(t *testing.T) {
	t.Parallel()
	adaptertest.ContentWithinModelBytes(t, "mcp-go", func(r *dualresp.Response) any { return mcpgo.Content(r) })
}
