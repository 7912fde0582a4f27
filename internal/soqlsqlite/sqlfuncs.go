package soqlsqlite

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"sync"

	"modernc.org/sqlite"
)

// Register installs in the modernc.org/sqlite driver the Go functions
// (localportal_*) that compiled statements call; run a Statement only after
// it returned nil. The driver's functions are process-wide: the work is
// done once, and later calls return the first one's error.
func Register() error { return register() }

var register = sync.OnceValue(func() error {
	var errs []error
	add := func(name string, n int32, fn func(args []any) (any, error)) {
		errs = append(errs, sqlite.RegisterDeterministicScalarFunction(name, n,
			func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				a := make([]any, len(args))
				for i, v := range args {
					a[i] = v
				}
				return fn(a)
			}))
	}
	add("localportal_row_id", 1, func(a []any) (any, error) {
		n, ok := a[0].(int64)
		if !ok {
			return nil, nil
		}
		return rowIDString(n), nil
	})
	add("localportal_distance", 4, func(a []any) (any, error) {
		var f [4]float64
		for i, v := range a {
			x, ok := ToFloat(v)
			if !ok {
				return nil, nil
			}
			f[i] = x
		}
		return haversine(f[0], f[1], f[2], f[3]), nil
	})
	add("localportal_like", 2, func(a []any) (any, error) {
		s, ok1 := a[0].(string)
		p, ok2 := a[1].(string)
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		if !ok1 {
			s = FormatScalar(a[0])
		}
		if !ok2 {
			p = FormatScalar(a[1])
		}
		match, err := likeMatch(s, p)
		if err != nil {
			return nil, err
		}
		if match {
			return int64(1), nil
		}
		return int64(0), nil
	})
	add("localportal_text", 1, func(a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return FormatScalar(a[0]), nil
	})
	add("localportal_ts", 1, func(a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		ts, ok := NormalizeTimestamp(s, false)
		if !ok {
			return nil, nil
		}
		return ts, nil
	})
	add("localportal_pow", 2, func(a []any) (any, error) {
		x, ok1 := ToFloat(a[0])
		y, ok2 := ToFloat(a[1])
		if !ok1 || !ok2 {
			return nil, nil
		}
		return math.Pow(x, y), nil
	})
	errs = append(errs, registerMoreFuncs(add)...)
	for name, sample := range map[string]bool{"localportal_stddev_pop": false, "localportal_stddev_samp": true} {
		errs = append(errs, sqlite.RegisterFunction(name, &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
			MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
				return &stddev{sample: sample}, nil
			}}))
	}
	return errors.Join(errs...)
})

// stddev is the standard deviation aggregate (Welford's algorithm), of the
// population or of a sample, as PostgreSQL (behind Socrata) computes them:
// null without values, and for a sample also with one value.
type stddev struct {
	sample   bool
	n        int64
	mean, m2 float64
}

func (a *stddev) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	x, ok := ToFloat(args[0])
	if !ok {
		return nil // null, or text that is no number
	}
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
	return nil
}

func (a *stddev) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("soqlsqlite: standard deviation is not a window function")
}

func (a *stddev) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	switch {
	case a.n == 0, a.sample && a.n == 1:
		return nil, nil
	case a.sample:
		return math.Sqrt(a.m2 / float64(a.n-1)), nil
	default:
		return math.Sqrt(a.m2 / float64(a.n)), nil
	}
}

func (a *stddev) Final(*sqlite.FunctionContext) {}

// rowIDAlphabet is in ASCII order so that fixed-width ids sort like numbers.
const rowIDAlphabet = "23456789abcdefghijkmnpqrstuvwxyz"

// rowIDString renders a row number as a Socrata-style row identifier
// ("row-2222.2222-2223"): fixed width, so text order equals numeric order.
func rowIDString(n int64) string {
	var d [12]byte
	u := uint64(n)
	for i := 11; i >= 0; i-- {
		d[i] = rowIDAlphabet[u%32]
		u /= 32
	}
	return "row-" + string(d[0:4]) + "." + string(d[4:8]) + "-" + string(d[8:12])
}

const earthRadiusMeters = 6371008.8

func haversine(lat1, lon1, lat2, lon2 float64) float64 {
	rad := math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLon := (lon2 - lon1) * rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusMeters * math.Asin(math.Min(1, math.Sqrt(a)))
}

// likeMatch implements SQL LIKE ('%' any run, '_' one character) with
// case-sensitive comparison, as SoQL does, or an error past maxLikeSteps
// steps.
func likeMatch(s, p string) (bool, error) {
	sr, pr := []rune(s), []rune(p)
	// Iterative wildcard matching with backtracking on the last '%'.
	si, pi, star, mark := 0, 0, -1, 0
	for steps := 0; si < len(sr); steps++ {
		if steps > maxLikeSteps {
			return false, &LimitError{fmt.Sprintf("LIKE of a %d-character pattern on a %d-character value takes too long; use a shorter pattern or fewer %% wildcards", len(pr), len(sr))}
		}
		switch {
		case pi < len(pr) && (pr[pi] == '_' || pr[pi] == sr[si]):
			si++
			pi++
		case pi < len(pr) && pr[pi] == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false, nil
		}
	}
	for pi < len(pr) && pr[pi] == '%' {
		pi++
	}
	return pi == len(pr), nil
}
