package dualresp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestParquetRowGroupBytes: a Parquet export of wide rows ends its row
// groups by bytes (ParquetRowGroupBytes) before ParquetRowGroupRows, so
// that the row group a writer holds stays small; every row is still there.
// The failure this guards against (issue 55): 16,384 rows a group whatever
// their width, ~14 MiB held for each slow reader.
func TestParquetRowGroupBytes(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	pw := NewParquetWriter(&out, []Column{{Name: "text", Type: "text"}, {Name: "n", Type: "number"}})
	wide := strings.Repeat("x", 1000)
	const rows = ParquetRowGroupRows
	for i := range rows {
		row, _ := json.Marshal(map[string]any{"text": wide, "n": i})
		if err := pw.WriteRow(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != rows {
		t.Fatalf("NumRows = %d; want %d", f.NumRows(), rows)
	}
	// 16,384 rows of about 1,020 bytes: 16.3 MB, so at least 7 groups of
	// at most 2 MiB.
	groups := f.Metadata().RowGroups
	if len(groups) < 7 {
		t.Errorf("%d row groups; want at least 7 (16,384 rows of ~1 KB, at most %d bytes a group)", len(groups), ParquetRowGroupBytes)
	}
	for i, g := range groups {
		if g.TotalByteSize > 2*ParquetRowGroupBytes {
			t.Errorf("row group %d: %d bytes uncompressed; want about %d at most", i, g.TotalByteSize, ParquetRowGroupBytes)
		}
	}
	t.Logf("16,384 rows of ~1 KB: %d row groups, the first %d rows and %d bytes uncompressed", len(groups), groups[0].NumRows, groups[0].TotalByteSize)
}
