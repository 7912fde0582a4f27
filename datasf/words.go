package datasf

import (
	"strconv"
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
