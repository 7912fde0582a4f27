//go:build e2e

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// A Parquet download of the built binary reads back with hyparquet (a
// JavaScript Parquet reader, pinned in package-lock.json, independent of
// the Go writer): typed from the column types (numbers as DOUBLE, other
// types as strings, every column optional), and the same rows in the
// same order as the NDJSON download.
func TestParquetReadByIndependentReader(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the interop test in -short mode")
	}
	node := harness.Node(t, "hyparquet")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := buildBinary(t)
	const soql = "SELECT objectid, applicant, latitude, longitude, approved, location"
	download := func(name string) string {
		path := filepath.Join(dir, name)
		cmd := exec.CommandContext(ctx, bin, "query", "rqzj-sfat", soql, "--offline", "--all", "-o", path)
		cmd.Env = append(os.Environ(), "DATASF_LOG_LEVEL=warn", "DATASF_CACHE_DIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("datasf-mcp query --all -o %s: %v\n%s", name, err, out)
		}
		return path
	}
	pq, nd := download("permits.parquet"), download("permits.ndjson")

	out, err := exec.CommandContext(ctx, node, "parquet_read.mjs", pq).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node parquet_read.mjs: %v\n%s", err, stderr)
	}
	var got struct {
		Schema []struct {
			Name, Type, Repetition string
		} `json:"schema"`
		RowGroups int              `json:"row_groups"`
		Rows      []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("parquet_read.mjs printed %.200s: %v", out, err)
	}
	types := map[string]string{}
	for _, c := range got.Schema {
		types[c.Name] = c.Type
		if c.Repetition != "OPTIONAL" {
			t.Errorf("column %s is %s; want OPTIONAL", c.Name, c.Repetition)
		}
	}
	wantTypes := map[string]string{"objectid": "DOUBLE", "latitude": "DOUBLE", "longitude": "DOUBLE",
		"applicant": "BYTE_ARRAY", "approved": "BYTE_ARRAY", "location": "BYTE_ARRAY"}
	for name, want := range wantTypes {
		if types[name] != want {
			t.Errorf("column %s has Parquet type %q; want %s", name, types[name], want)
		}
	}

	f, err := os.Open(nd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	if len(got.Rows) != len(want) || len(want) == 0 {
		t.Fatalf("Parquet has %d rows; the NDJSON download %d", len(got.Rows), len(want))
	}
	for i, w := range want {
		g := got.Rows[i]
		for col := range wantTypes {
			if !sameValue(w[col], g[col], wantTypes[col]) {
				t.Fatalf("row %d column %s: Parquet %#v; NDJSON %#v", i, col, g[col], w[col])
			}
		}
	}
	t.Logf("Parquet read back by hyparquet: %d rows in %d row group(s), columns %v", len(got.Rows), got.RowGroups, types)
}

// sameValue compares an NDJSON value (Socrata's strings) with what the
// Parquet reader gave for a column of the Parquet type.
func sameValue(nd, pq any, typ string) bool {
	if nd == nil {
		return pq == nil
	}
	switch typ {
	case "DOUBLE":
		s, _ := nd.(string)
		f, err := strconv.ParseFloat(s, 64)
		p, ok := pq.(float64)
		return err == nil && ok && f == p
	}
	if s, ok := nd.(string); ok {
		return pq == s
	}
	// Objects (a point) are GeoJSON text in Parquet.
	a, _ := json.Marshal(nd)
	var v any
	if s, ok := pq.(string); !ok || json.Unmarshal([]byte(s), &v) != nil {
		return false
	}
	b, _ := json.Marshal(v)
	return bytes.Equal(a, b)
}
