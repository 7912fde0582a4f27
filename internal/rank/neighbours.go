package rank

import (
	"cmp"
	"slices"

	"github.com/datasf-mcp/datasf-mcp/internal/wordvec"
)

// A typed word that at most neighbourMaxDocs datasets have ("toilets",
// "criminal") also finds the catalog's words nearest it in GloVe
// (package wordvec): up to neighboursPerWord of them whose cosine is at
// least neighbourMinCos, each weighing neighbourWeight times its cosine
// against a typed word's 1. A word many datasets have already says what
// it means in the catalog's own words, and is left alone: widening it
// only adds noise ("live" is near "watch" and "show").
//
// The four figures were chosen on the evaluation sets (docs/benchmarks.md):
// over the users' search words, top-1 0.71 → 0.75 and top-3 0.87 → 0.89
// in-process, the development sets and the users' questions level or
// better; a larger document frequency, a lower cosine or a larger weight
// cost the users' questions their top-3.
const (
	neighbourMaxDocs  = 10
	neighbourMinCos   = 0.7
	neighbourWeight   = 0.6
	neighboursPerWord = 3
)

// vocabWord is a word of the catalog that has a GloVe vector.
type vocabWord struct {
	stem string
	vec  wordvec.Vector
}

// catalogVocab lists the catalog's words with a vector (stems: each word
// of the catalog and its stem).
func catalogVocab(stems map[string]string) []vocabWord {
	var out []vocabWord
	for w, st := range stems {
		if v := wordvec.Lookup(w); v != nil {
			out = append(out, vocabWord{st, v})
		}
	}
	// A map's order is random: sort, so that equal cosines pick the same
	// words every time.
	slices.SortFunc(out, func(a, b vocabWord) int { return cmp.Compare(a.stem, b.stem) })
	return out
}

// neighbours returns the query terms that the rare words of query bring:
// the catalog's nearest words (see neighbourMaxDocs), none of those in
// seen, which it updates.
func (ix *Index) neighbours(query string, seen map[string]bool) []queryTerm {
	var out []queryTerm
	type near struct {
		stem string
		cos  float64
	}
	var cands []near
	for _, w := range Words(query) {
		if isStopWord(w) || extraStopWords[w] || isNumber(w) {
			continue
		}
		st := Stem(w)
		if t, ok := ix.terms[st]; ok && len(ix.postings[t]) > neighbourMaxDocs {
			continue
		}
		v := wordvec.Lookup(w)
		if v == nil {
			continue
		}
		cands = cands[:0]
		for _, cw := range ix.vocab {
			if cw.stem == st {
				continue
			}
			if c := wordvec.Cos(v, cw.vec); c >= neighbourMinCos {
				cands = append(cands, near{cw.stem, c})
			}
		}
		slices.SortStableFunc(cands, func(a, b near) int { return cmp.Compare(b.cos, a.cos) })
		n := 0
		for _, c := range cands {
			if n == neighboursPerWord {
				break
			}
			if seen[c.stem] {
				continue
			}
			seen[c.stem] = true
			out = append(out, queryTerm{stem: c.stem, weight: neighbourWeight * c.cos})
			n++
		}
	}
	return out
}
