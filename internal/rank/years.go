package rank

import "strings"

// Years a search asks for: a question that names years ("crime incidents
// from 2005 to 2015", "parking offenders since 2020") wants the dataset
// whose years those are. Many of a portal's datasets say in their names
// which years they hold ("Police Department Incident Reports: Historical
// 2003 to May 2018" and "…: 2018 to Present", "Historic Zoning Districts -
// 2005", "Census 2020: Blocks"), and the years of such a name are the one
// thing the text score cannot weigh: the words 2005 and 2015 are in
// neither name. So a dataset whose name names years has its score
// multiplied by 1 - (1-yearsFactor) times the share of the years asked
// that its span leaves out: yearsFactor when it has none of them, as a
// retired dataset has (retiredFactor), unchanged when it has them all. A
// dataset whose name names no year, and a search that names none, are
// left as they are.
const yearsFactor = 0.5

// span is a range of years, both ends included; the zero span is none.
type span struct{ from, to int }

func (s span) none() bool { return s.from == 0 }

// covered is the share of s's years that t holds (0 to 1).
func (s span) covered(t span) float64 {
	lo, hi := max(s.from, t.from), min(s.to, t.to)
	if hi < lo {
		return 0
	}
	return float64(hi-lo+1) / float64(s.to-s.from+1)
}

// yearsWeight is the multiplier of a dataset's score whose name spans has
// for a search asking for asked.
func yearsWeight(asked, has span) float64 {
	if asked.none() || has.none() {
		return 1
	}
	return 1 - (1-yearsFactor)*(1-asked.covered(has))
}

// year is the year w names (1900 to 2099, "2018" or "FY2016"), or 0.
func year(w string) int {
	w = strings.TrimPrefix(w, "fy")
	if len(w) != 4 || !isNumber(w) || (w[:2] != "19" && w[:2] != "20") {
		return 0
	}
	y := 0
	for _, c := range w {
		y = y*10 + int(c-'0')
	}
	return y
}

// nameSpan is the span of the years a dataset's name names, from the
// first to the last; a name that also says "present", "now" or "current"
// ("2018 to Present") runs to the year the dataset was last updated (now
// when unknown). A name without a year has none ("Current Supervisor
// Districts" says which districts, not which years).
func nameSpan(name string, updated, now int) span {
	var s span
	open := false
	for _, w := range Words(name) {
		switch w {
		case "present", "now", "current":
			open = true
		}
		if y := year(w); y > 0 {
			s = widen(s, y)
		}
	}
	if open && !s.none() {
		if updated <= 0 {
			updated = now
		}
		s.to = max(s.to, updated)
	}
	return s
}

// querySpan is the span of the years a search names, from the first to
// the last; "since 2020" or "after 2020" runs to now.
func querySpan(query string, now int) span {
	var s span
	words := Words(query)
	for i, w := range words {
		y := year(w)
		if y == 0 {
			continue
		}
		s = widen(s, y)
		if i > 0 && (words[i-1] == "since" || words[i-1] == "after") {
			s.to = max(s.to, now)
		}
	}
	return s
}

func widen(s span, y int) span {
	if s.none() {
		return span{y, y}
	}
	return span{min(s.from, y), max(s.to, y)}
}
