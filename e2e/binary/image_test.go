//go:build e2e

package binary

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryImageWritesPNG runs query --image through the built binary on
// the offline snapshot: the PNG is written to --image-out FILE, else next
// to -o FILE, else to DATASET_ID.png, and stderr says where and what it
// shows; a result with no picture writes no file and says why.
func TestQueryImageWritesPNG(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	const byDistrict = "SELECT supervisor_district, count(*) AS n GROUP BY supervisor_district"
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), binary(t), append(args, "--offline", "--log-level", "warn")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DATASF_REST_TOKEN=", "DATASF_SERVER=", "DATASF_OFFLINE=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("datasf-mcp %q: %v\n%s", args, err, stderr.String())
		}
		return stderr.String()
	}
	isPNG := func(path string) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("no picture at %s: %v", path, err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("%s is not a PNG: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() != 768 || b.Dy() != 432 {
			t.Errorf("%s is %dx%d; want the picture's 768x432", path, b.Dx(), b.Dy())
		}
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "districts.png")
	stderr := run(dir, "query", "wg3w-h783", byDistrict, "--image-out", out)
	isPNG(out)
	if want := "written to " + out + ": map of n by supervisor_district, 11 areas"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want it to say %q", stderr, want)
	}

	// --image with -o x.json: x.png next to it.
	run(dir, "query", "wg3w-h783", byDistrict, "--image", "-o", filepath.Join(dir, "x.json"))
	isPNG(filepath.Join(dir, "x.png"))

	// --image alone: DATASET_ID.png in the current directory.
	run(dir, "query", "wg3w-h783", byDistrict, "--image")
	isPNG(filepath.Join(dir, "wg3w-h783.png"))

	// No picture for this result: no file, and the reason.
	none := filepath.Join(dir, "none.png")
	stderr = run(dir, "query", "wg3w-h783", "SELECT incident_category, incident_description LIMIT 3", "--image-out", none)
	if _, err := os.Stat(none); err == nil {
		t.Errorf("%s written for a result with no picture", none)
	}
	if !strings.Contains(stderr, "no picture written to "+none+": No picture:") {
		t.Errorf("stderr %q; want it to say no picture was written, and why", stderr)
	}
}
