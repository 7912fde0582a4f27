package datasf

import (
	"fmt"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestSessionResultsConcurrentAdds: results created at once by one caller
// (tool calls run concurrently) are all listed.
func TestSessionResultsConcurrentAdds(t *testing.T) {
	t.Parallel()
	var r sessionResults
	ctx := dualresp.WithOwner(t.Context(), "owner-a")
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() { r.add(ctx, fmt.Sprint(i)) })
	}
	wg.Wait()
	if got := len(r.list(ctx)); got != 100 {
		t.Errorf("after 100 concurrent adds, list has %d ids; want 100", got)
	}
}
