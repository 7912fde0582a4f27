//go:build e2e

package localportal

import "testing"

// TestStatsKeptWithTheCacheLarge is TestStatsKeptWithTheCache on a dataset
// larger than statsSyncRows, whose statistics are computed in the
// background after its first Views request: 50,250 rows of wg3w-h783.
func TestStatsKeptWithTheCacheLarge(t *testing.T) {
	t.Parallel()
	checkStatsKept(t, 0.201, "wg3w-h783")
}
