package fuzzymatch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"abc", "abd", 1},        // replace
		{"abc", "ab", 1},         // drop
		{"abc", "abxc", 1},       // insert
		{"abcd", "abdc", 1},      // swap neighbours: one edit, not two
		{"ca", "abc", 3},         // OSA (true Damerau-Levenshtein would give 2)
		{"kitten", "sitting", 3}, // the textbook Levenshtein example
		{"incident_category", "incdient_category", 1},
		{"neighborhood", "neighbourhood", 1},
		{"date", "data", 1},
		{"ab", "ba", 1},
		{"café", "cafe", 1}, // counted in runes, not bytes
		{"日本語", "日本", 1},
		{"supervisor_district", "supervisor_districts", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d; want %d (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

// levenshtein is the plain textbook dynamic program, without swaps, as a
// reference: OSA distance is at most it and at least half of it.
func levenshtein(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
		}
	}
	return d[len(a)][len(b)]
}

// TestDistanceProperties checks, on random short strings, the bounds against
// plain Levenshtein, symmetry, and that the early exit of a bounded
// computation never changes an answer within the bound.
func TestDistanceProperties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abc_é")
	word := func() []rune {
		w := make([]rune, r.IntN(9))
		for i := range w {
			w[i] = alphabet[r.IntN(len(alphabet))]
		}
		return w
	}
	var s scratch
	for range 5000 {
		a, b := word(), word()
		d := Distance(string(a), string(b))
		lev := levenshtein(a, b)
		if d > lev || 2*d < lev {
			t.Fatalf("Distance(%q, %q) = %d; Levenshtein %d (want lev/2 <= d <= lev)", string(a), string(b), d, lev)
		}
		if back := Distance(string(b), string(a)); back != d {
			t.Fatalf("Distance not symmetric: (%q, %q) = %d, reversed %d", string(a), string(b), d, back)
		}
		for bound := range 5 {
			got := s.distance(a, b, bound)
			if d <= bound && got != d {
				t.Fatalf("bounded distance(%q, %q, %d) = %d; want %d", string(a), string(b), bound, got, d)
			}
			if d > bound && got <= bound {
				t.Fatalf("bounded distance(%q, %q, %d) = %d; want > %d (true %d)", string(a), string(b), bound, got, bound, d)
			}
		}
	}
}

func TestNormalized(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want float64
	}{
		{"", "", 0},
		{"abcd", "abcd", 0},
		{"abcd", "abce", 0.25},
		{"ab", "xy", 1},
		{"abcde", "", 1},
	}
	for _, tt := range tests {
		if got := Normalized(tt.a, tt.b); got != tt.want {
			t.Errorf("Normalized(%q, %q) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCanonicalAndNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, canonical, normalized string
	}{
		{"Incident_Category", "incident_category", "incident_category"},
		{"incident-category", "incident_category", "incident_category"},
		{"incident category", "incident category", "incident_category"},
		{"ZIP-Code Area", "zip_code area", "zip_code_area"},
	}
	for _, tt := range tests {
		if got := Canonical(tt.in); got != tt.canonical {
			t.Errorf("Canonical(%q) = %q; want %q", tt.in, got, tt.canonical)
		}
		if got := normalize(tt.in); got != tt.normalized {
			t.Errorf("normalize(%q) = %q; want %q", tt.in, got, tt.normalized)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	cols := []string{"incident_category", "incident_subcategory", "lat", "lon", "year", "supervisor_district", ":id", ":@computed_region_abcd", "police_district",
		"received_datetime", "close_datetime", "date_added", "data_as_of", "supervisor_districts_2012", "transaction_date", "status", "state"}
	tests := []struct {
		name    string
		verdict verdict
		best    string   // when corrected
		ties    []string // when ambiguous
	}{
		{"incident_categroy", corrected, "incident_category", nil},
		{"Incident Category", corrected, "incident_category", nil},
		{"incident_subcategry", corrected, "incident_subcategory", nil},
		{"supervisor_distrct", corrected, "supervisor_district", nil},
		{"lot", unknown, "", nil},             // too short to tell a typo from another word
		{"call_datetime", unknown, "", nil},   // nearest close_datetime: a whole word differs
		{"year_added", unknown, "", nil},      // nearest date_added: a whole word differs
		{"data_as_of_year", unknown, "", nil}, // a word added
		{"district", unknown, "", nil},
		{"police_districts", corrected, "police_district", nil}, // plural
		{"policedistrict", corrected, "police_district", nil},   // an underscore dropped
		{"supervisor_distric", corrected, "supervisor_district", nil},
		{"statu", ambiguous, "", []string{"state", "status"}}, // one edit from both
		{"supervisor_districts_2013", unknown, "", nil},       // another number
		{"transaction_data", unknown, "", nil},                // data is a word of data_as_of
		{"stage", unknown, "", nil},                           // one edit from state, but a word itself
		{"stauts", corrected, "status", nil},
		{"yaer", corrected, "year", nil},
		{"xyz", unknown, "", nil},
		{"id", unknown, "", nil}, // :id is a system field, never a candidate
		{"computed_region_abcd", unknown, "", nil},
		{"completely_different", unknown, "", nil},
	}
	m := newMatcher(cols, DefaultThreshold)
	for _, tt := range tests {
		d := m.decide(tt.name)
		if d.verdict != tt.verdict {
			t.Errorf("decide(%q) verdict = %v; want %v (%+v)", tt.name, d.verdict, tt.verdict, d)
			continue
		}
		if tt.verdict == corrected && d.best.Column != tt.best {
			t.Errorf("decide(%q) = %q; want %q", tt.name, d.best.Column, tt.best)
		}
		if tt.verdict == ambiguous {
			var got []string
			for _, c := range d.ties {
				got = append(got, c.Column)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.ties) {
				t.Errorf("decide(%q) ties = %v; want %v", tt.name, got, tt.ties)
			}
		}
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	cols := []string{"incident_category", "incident_subcategory", "incident_date", "report_type_code", ":id"}
	got := Closest("incident_cat", cols, 2)
	if want := []string{"incident_date", "incident_category"}; !slices.Equal(got, want) {
		t.Errorf("Closest(incident_cat, 2) = %v; want %v", got, want)
	}
	for _, c := range Closest("id", cols, 10) {
		if c == ":id" {
			t.Errorf("Closest offered the system field :id")
		}
	}
	if got := Closest("x", cols, 0); got != nil {
		t.Errorf("Closest(n=0) = %v; want nil", got)
	}
}
