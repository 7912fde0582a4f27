package gosdk_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp/adaptertest"
)

// TestEntryPointsHaveExamples: the adapter's entry points have runnable
// examples with checked output, which go doc shows next to them: the tool
// result of a response, and reading one back.
func TestEntryPointsHaveExamples(t *testing.T) {
	t.Parallel()
	adaptertest.HasExamples(t, "Result", "Parse", "")
}
