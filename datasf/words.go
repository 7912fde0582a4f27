package datasf

import (
	"strconv"
	"strings"
)

// nouns is n with its noun in the number n takes: "1 dataset", "2
// datasets", "0 rows". many is the plural ("" adds an s).
func nouns(n int64, one, many string) string {
	if many == "" {
		many = one + "s"
	}
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// thousandsRows is n rows with comma separators: "1 row", "12,489 rows".
func thousandsRows(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return thousands(n) + " rows"
}

// thousands writes n with comma separators: 12,489.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
