//go:build e2e

package binary

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal/sampledata"
)

// scaleRows is the size of the generated export of TestScaleMillionRowCSV.
const scaleRows = 1_000_000

// writeScaleCSV writes the n-row export of sampledata.WriteIncidentsCSV.
func writeScaleCSV(t testing.TB, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sampledata.WriteIncidentsCSV(f, n); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// procStatus reads a field ("VmHWM", "VmRSS") of /proc/PID/status in bytes.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	n, err := readProcStatus(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// readProcStatus reads a field of /proc/PID/status given in kB (VmRSS,
// VmHWM), in bytes.
func readProcStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// startScale starts `serve --offline --data csv --data-strict` (the file
// loads before the server answers) and waits until it is healthy.
func startScale(t *testing.T, csvPath, cache string) (*instance, *lockedWriter, time.Duration) {
	t.Helper()
	// The port freeAddr found may be taken by another test's process before
	// this one binds it: then this server exits and the other one answers
	// /healthz. Ready means /healthz answers and this server's own log says
	// the file is loaded (--data-strict loads it before serving); a server
	// that lost its port is started again on another.
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		inst := &instance{base: "http://" + addr, stderr: &bytes.Buffer{}}
		inst.cmd = exec.Command(binary(t), "serve", "--http", addr, "--offline", "--log-level", "info",
			"--data", csvPath, "--data-strict", "--cache-dir", cache)
		logs := &lockedWriter{w: inst.stderr}
		inst.cmd.Stderr = logs
		start := time.Now()
		if err := inst.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(inst.kill)
		deadline := start.Add(3 * time.Minute)
		for {
			own := logs.String()
			if strings.Contains(own, "address already in use") && attempt < 3 {
				inst.kill()
				break
			}
			resp, err := http.Get(inst.base + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK && strings.Contains(own, "data file loaded") {
					return inst, logs, time.Since(start)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server did not become ready: %v\nstderr: %s", err, own)
			}
			time.Sleep(50 * time.Millisecond) // polling a child process's readiness, bounded by deadline
		}
	}
}

// TestScaleMillionRowCSV is the scale check of --data: a generated
// 1,000,000-row CSV export loads with --data within a peak RSS of 300 MiB,
// answers a GROUP BY, and the next start reuses the cache instead of
// loading the file again. It logs the times (benchmarks, not assertions:
// make bench part 5 reports them against the goals).
func TestScaleMillionRowCSV(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak RSS from /proc")
	}
	if testing.Short() {
		t.Skip("writes and loads a 1,000,000-row file (about a minute)")
	}
	t.Parallel()
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "Scale_Test_Incidents.csv")
	writeScaleCSV(t, csvPath, scaleRows)
	cache := filepath.Join(dir, "cache")
	const groupBy = "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC"

	inst, logs1, load := startScale(t, csvPath, cache)
	m := regexp.MustCompile(`data file loaded.* dataset=(\S+) name="Scale Test Incidents" matched_by="new dataset"`).FindStringSubmatch(logs1.String())
	if m == nil {
		t.Fatalf("no log line of the file loaded as a new dataset named after it:\n%s", logs1)
	}
	id := m[1]
	start := time.Now()
	inst.query(t, id, groupBy)
	firstQuery := time.Since(start)
	peak := procStatus(t, inst.cmd.Process.Pid, "VmHWM")
	t.Logf("first start: %d rows loaded and ready in %v, peak RSS %.1f MiB; first GROUP BY %v",
		scaleRows, load.Round(time.Millisecond), float64(peak)/(1<<20), firstQuery.Round(time.Millisecond))
	if peak > 300<<20 {
		t.Errorf("peak RSS loading %d rows = %.1f MiB; want at most 300 MiB", scaleRows, float64(peak)/(1<<20))
	}
	if logs := logs1.String(); !strings.Contains(logs, "cache=built") {
		t.Errorf("first start: the log does not say the file was built into the cache:\n%s", logs)
	}
	inst.kill()

	inst2, logs2, ready := startScale(t, csvPath, cache)
	start = time.Now()
	sc2 := inst2.query(t, id, groupBy)
	warmQuery := time.Since(start)
	t.Logf("second start: ready in %v, first GROUP BY %v, RSS %.1f MiB", ready.Round(time.Millisecond),
		warmQuery.Round(time.Millisecond), float64(procStatus(t, inst2.cmd.Process.Pid, "VmRSS"))/(1<<20))
	if logs := logs2.String(); !strings.Contains(logs, "cache=reused") || strings.Contains(logs, "cache file built") {
		t.Errorf("second start: want the cache reused, not built again; log:\n%s", logs)
	}
	meta, _ := sc2["metadata"].(map[string]any)
	if got := meta["total_count"]; fmt.Sprint(got) != strconv.Itoa(len(sampledata.ExportCategories)) {
		t.Errorf("GROUP BY total_count = %v; want %d categories", got, len(sampledata.ExportCategories))
	}
	var sum int
	for _, r := range sc2["results"].([]any) {
		n, _ := strconv.Atoi(fmt.Sprint(r.(map[string]any)["n"]))
		sum += n
	}
	if sum != scaleRows {
		t.Errorf("the groups' counts add up to %d; want %d", sum, scaleRows)
	}
}

// String returns what was written so far (a *bytes.Buffer's text).
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.w)
}
