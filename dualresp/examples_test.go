package dualresp_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp/adaptertest"
)

// TestEntryPointsHaveExamples: each public entry point a library user
// starts from has a runnable example with checked output, so go doc shows
// it next to the function: New with a custom Executor, and the client's
// FetchAll and Rows. (The adapters' modules, dualresp/mcpgo and
// dualresp/gosdk, check theirs.)
func TestEntryPointsHaveExamples(t *testing.T) {
	t.Parallel()
	adaptertest.HasExamples(t, "New", "Parsed_FetchAll", "Parsed_Rows", "_client", "Server_LinkHandler")
}
