//go:build !race

package fuzzymatch_test

const raceSample = 1
