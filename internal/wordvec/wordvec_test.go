package wordvec

import "testing"

// The embedded file parses whole, and its nearest words are what GloVe
// says of English: a word is close to its synonyms, far from an unrelated
// word, and exactly itself.
func TestVectors(t *testing.T) {
	t.Parallel()
	if n := Len(); n != 30000 {
		t.Fatalf("vectors.bin holds %d words; want 30000 (gen -n 30000)", n)
	}
	for _, w := range []string{"the", "toilets", "crime", "restroom"} {
		if Lookup(w) == nil {
			t.Fatalf("no vector for %q", w)
		}
	}
	if Lookup("zzqx") != nil || Lookup("Crime") != nil {
		t.Error("a vector for a word not kept (unknown, or not lower-case)")
	}
	if c := Cos(Lookup("crime"), Lookup("crime")); c < 0.99 || c > 1.01 {
		t.Errorf("cos(crime, crime) = %.3f; want 1 (unit vectors)", c)
	}
	for _, p := range []struct {
		a, b   string
		closer bool
	}{
		{"toilets", "restroom", true},
		{"criminal", "crime", true},
		{"pandemic", "influenza", true},
		{"toilets", "budget", false},
		{"toilets", "zzqx", false},
		{"criminal", "trees", false},
	} {
		c := Cos(Lookup(p.a), Lookup(p.b))
		t.Logf("cos(%s, %s) = %.3f", p.a, p.b, c)
		if p.closer != (c >= 0.55) {
			t.Errorf("cos(%s, %s) = %.3f; want it %s 0.55", p.a, p.b, c, map[bool]string{true: "at least", false: "below"}[p.closer])
		}
	}
}

func TestParseRefusesACutFile(t *testing.T) {
	t.Parallel()
	if _, err := parse(data[:len(data)-3]); err == nil {
		t.Error("a cut vectors.bin parsed without error")
	}
}
