//go:build race

package fuzzymatch_test

// raceSample thins the invented corpus under the race detector, which makes
// Correct about ten times slower; the figures are printed from the full
// sample without it.
const raceSample = 5
