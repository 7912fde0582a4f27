//go:build !race

package datasf_test

// raceScale stretches the timing of the load tests under the race
// detector, which makes the product several times slower.
const raceScale = 1
