//go:build e2e

package fuzzymatch_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

func (c typoTally) n() int { return c.right + c.alone + c.wrong }

var typoKinds = []string{"drop", "swap", "insert", "replace", "case", "space"}

// typoBenchmark injects single-edit typos into the column references of the
// corpus queries and tallies, per kind, the share corrected to the right
// column, left alone, and changed to a wrong column.
func typoBenchmark(t *testing.T) (per map[string]*typoTally, total typoTally) {
	t.Helper()
	per = map[string]*typoTally{}
	for _, k := range typoKinds {
		per[k] = &typoTally{}
	}
	r := rand.New(rand.NewPCG(2026, 11))
	for _, cq := range loadCorpus(t) {
		q, err := soql.Parse(cq.soql)
		if err != nil || !refsKnown(q, cq.columns) {
			continue
		}
		known := map[string]bool{}
		for _, c := range cq.columns {
			known[strings.ReplaceAll(strings.ToLower(c), "-", "_")] = true
		}
		aliases := map[string]bool{}
		for _, it := range q.Stages[0].Selection {
			if it.Alias != nil {
				aliases[strings.ToLower(it.Alias.Name)] = true
			}
		}
		seen := map[string]bool{}
		for _, ref := range q.ColumnRefs() {
			if seen[ref.Name] || ref.Quoted {
				continue
			}
			seen[ref.Name] = true
			for _, kind := range typoKinds {
				bad, ok := typo(r, kind, ref.Name)
				norm := strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(bad), "-", "_"), " ", "_")
				if !ok || (kind != "case" && kind != "space" && known[norm]) || aliases[strings.ToLower(bad)] {
					per[kind].skipped++ // no typo, or the typo is another valid name
					continue
				}
				spelled := bad
				if kind == "space" {
					spelled = "`" + bad + "`"
				}
				res, err := fuzzymatch.Correct(replaceRef(cq.soql, q, ref.Name, spelled), cq.columns, fuzzymatch.Options{})
				if err != nil {
					per[kind].skipped++ // the typo broke the syntax (e.g. made a keyword)
					continue
				}
				fixed, err := soql.Parse(res.Query)
				if err != nil {
					t.Fatalf("Correct produced unparsable SoQL %q: %v", res.Query, err)
				}
				// The tree renamed in place with Result.Renames (what
				// query_datasf stores) says what the corrected text says.
				badText := replaceRef(cq.soql, q, ref.Name, spelled)
				tree, _ := soql.Parse(badText)
				tree.Rename(badText, res.Renames())
				if got, want := tree.String(), fixed.String(); got != want {
					t.Errorf("the tree of %q renamed by Result.Renames prints %q; the corrected text parses to %q", badText, got, want)
				}
				got := ""
				for _, other := range fixed.ColumnRefs() {
					if other.NamePos.Offset == ref.NamePos.Offset || strings.EqualFold(strings.ReplaceAll(other.Name, " ", "_"), strings.ReplaceAll(bad, " ", "_")) {
						got = other.Name
						break
					}
				}
				if got == "" { // positions moved: find the reference that took its place
					for _, c := range res.Corrections {
						if c.Original == bad {
							got = c.Corrected
						}
					}
					if got == "" {
						got = bad
					}
				}
				switch {
				case strings.EqualFold(got, ref.Name):
					per[kind].right++
				case got == bad:
					per[kind].alone++
					// The error the model gets lists candidates: the
					// intended column must come first.
					first := fuzzymatch.Closest(bad, cq.columns, 5)
					switch {
					case len(first) > 0 && strings.EqualFold(first[0], ref.Name):
						per[kind].firstRight++
					case tiedFirst(bad, ref.Name, first):
						per[kind].firstTied++
						t.Logf("typo %q of %s left alone; candidates %v: the intended column is as close as the first", bad, ref.Name, first)
					default:
						t.Errorf("typo %q of %s left alone; candidates %v: the intended column is not first", bad, ref.Name, first)
					}
				default:
					per[kind].wrong++
					t.Logf("typo %q of %s became %q", bad, ref.Name, got)
				}
			}
		}
	}
	for _, k := range typoKinds {
		c := per[k]
		total.right += c.right
		total.alone += c.alone
		total.firstRight += c.firstRight
		total.firstTied += c.firstTied
		total.wrong += c.wrong
		total.skipped += c.skipped
	}
	return per, total
}

// replaceRef writes spelled in place of every unquoted column reference of
// q (parsed from text) named name.
func replaceRef(text string, q *soql.Query, name, spelled string) string {
	var b strings.Builder
	last := 0
	for _, other := range q.ColumnRefs() {
		if other.Name != name || other.Quoted {
			continue
		}
		b.WriteString(text[last:other.NamePos.Offset])
		b.WriteString(spelled)
		last = other.NamePos.Offset + len(other.Raw)
	}
	b.WriteString(text[last:])
	return b.String()
}

// The typo benchmark: single-edit typos injected into the column references
// of the corpus queries; the share corrected to the right column (at least
// 96%), left alone (with the intended column first among the candidates
// the error offers, always), and changed to a wrong column (none).
func TestTypoBenchmark(t *testing.T) {
	t.Parallel()
	per, total := typoBenchmark(t)
	for _, k := range typoKinds {
		c := per[k]
		if n := c.n(); n > 0 {
			t.Logf("typo %-8s %4d: right %5.1f%% (%d), left alone %5.1f%% (%d), wrong %4.1f%% (%d); skipped %d",
				k, n, pct(c.right, n), c.right, pct(c.alone, n), c.alone, pct(c.wrong, n), c.wrong, c.skipped)
		}
	}
	n := total.n()
	t.Logf("typo benchmark overall %d typos: right %.1f%% (%d), left alone %.1f%% (%d; the intended column first among the candidates for %d of them, %.1f%%, and as close as the first for %d), wrong %.2f%% (%d); skipped %d (no typo possible, or another valid name)",
		n, pct(total.right, n), total.right, pct(total.alone, n), total.alone, total.firstRight, pct(total.firstRight, total.alone), total.firstTied, pct(total.wrong, n), total.wrong, total.skipped)
	if n < 100 {
		t.Fatalf("only %d typos measured; the benchmark needs more", n)
	}
	if pct(total.right, n) < 96 {
		t.Errorf("right %.1f%%; want at least 96%%", pct(total.right, n))
	}
	if total.wrong != 0 {
		t.Errorf("wrong %d; want none", total.wrong)
	}
}

func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}

// tiedFirst reports whether want is among candidates and exactly as many
// edits from bad as the first candidate (no order can tell them apart).
func tiedFirst(bad, want string, candidates []string) bool {
	if len(candidates) == 0 || !slices.ContainsFunc(candidates, func(c string) bool { return strings.EqualFold(c, want) }) {
		return false
	}
	d := func(c string) int {
		return fuzzymatch.Distance(strings.ToLower(bad), strings.ToLower(c))
	}
	return d(want) == d(candidates[0])
}

// typo injects one edit of the given kind into name.
func typo(r *rand.Rand, kind, name string) (string, bool) {
	rs := []rune(name)
	if len(rs) < 2 {
		return "", false
	}
	i := r.IntN(len(rs))
	letters := []rune("abcdefghijklmnopqrstuvwxyz")
	switch kind {
	case "drop":
		return string(append(append([]rune{}, rs[:i]...), rs[i+1:]...)), true
	case "swap":
		if i == len(rs)-1 {
			i--
		}
		if rs[i] == rs[i+1] {
			return "", false
		}
		out := append([]rune{}, rs...)
		out[i], out[i+1] = out[i+1], out[i]
		return string(out), true
	case "insert":
		return string(rs[:i]) + string(letters[r.IntN(len(letters))]) + string(rs[i:]), true
	case "replace":
		c := letters[r.IntN(len(letters))]
		if c == rs[i] {
			return "", false
		}
		out := append([]rune{}, rs...)
		out[i] = c
		return string(out), true
	case "case":
		up := strings.ToUpper(name[:1]) + name[1:]
		return up, up != name
	case "space":
		if !strings.Contains(name, "_") {
			return "", false
		}
		return strings.Replace(name, "_", " ", 1), true
	}
	return "", false
}

// typoTally counts one kind of injected typo.
type typoTally struct{ right, alone, firstRight, firstTied, wrong, skipped int }
