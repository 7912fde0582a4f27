package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary play the driver's child processes: the
// driver re-executes its own binary, which here is the test binary.
func TestMain(m *testing.M) {
	if code, ran := runChildIfAsked(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func TestUnionDuration(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	iv := func(a, b int) [2]time.Time { return [2]time.Time{at(a), at(b)} }
	tests := []struct {
		name string
		ivs  [][2]time.Time
		want time.Duration
	}{
		{"none", nil, 0},
		{"one", [][2]time.Time{iv(0, 5)}, 5 * time.Millisecond},
		{"parallel", [][2]time.Time{iv(0, 5), iv(1, 4)}, 5 * time.Millisecond},
		{"overlapping, out of order", [][2]time.Time{iv(3, 8), iv(0, 5)}, 8 * time.Millisecond},
		{"disjoint", [][2]time.Time{iv(0, 2), iv(5, 6)}, 3 * time.Millisecond},
		{"touching", [][2]time.Time{iv(0, 2), iv(2, 3)}, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := unionDuration(tt.ivs); got != tt.want {
				t.Errorf("unionDuration = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPercentileAndMedian(t *testing.T) {
	t.Parallel()
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond // 100 ms .. 1 ms
	}
	got := []time.Duration{percentile(ds, 50), percentile(ds, 99), percentile(ds, 100), percentile(ds[:1], 99)}
	want := []time.Duration{50 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("percentiles (-want +got):\n%s", diff)
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median(3,1,2) = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %v, want 2.5", got)
	}
}

func TestIDSet(t *testing.T) {
	t.Parallel()
	s := newIDSet(3)
	for _, row := range []string{`{"incident_id":"600000"}`, `{"a":1,"incident_id":"600002"}`, `{"incident_id":"600000"}`} {
		if err := s.add([]byte(row)); err != nil {
			t.Fatalf("add(%s): %v", row, err)
		}
	}
	if s.distinct != 2 {
		t.Errorf("distinct = %d, want 2", s.distinct)
	}
	for _, bad := range []string{`{"incident_id":"600003"}`, `{"incident_id":"599999"}`, `{"x":"1"}`, `{"incident_id":"abc"}`} {
		if err := s.add([]byte(bad)); err == nil {
			t.Errorf("add(%s) = nil, want an error", bad)
		}
	}
}

func TestGroup(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParseParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[int]bool
	}{
		{"1,2,3,4", map[int]bool{1: true, 2: true, 3: true, 4: true}},
		{" 2 ", map[int]bool{2: true}},
		{"4,1,4", map[int]bool{1: true, 4: true}},
		{"5", map[int]bool{5: true}},
		{"6", map[int]bool{6: true}},
	} {
		got, err := parseParts(tc.in)
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("parseParts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "7", "1,,2", "two"} {
		if _, err := parseParts(bad); err == nil || !strings.Contains(err.Error(), "-parts") {
			t.Errorf("parseParts(%q) error = %v; want one naming -parts", bad, err)
		}
	}
}
