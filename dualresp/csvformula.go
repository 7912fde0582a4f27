package dualresp

import "strconv"

// Spreadsheet formulas in CSV exports. A spreadsheet opening a CSV file
// runs a cell that starts with '=', '+', '-' or '@' (or a tab or carriage
// return before one) as a formula: a result holding text such as
// =HYPERLINK("http://…") would run in whoever opens the export (CSV
// injection, see OWASP's "CSV Injection"). A format=csv export therefore
// prefixes such a text cell with a single quote, which spreadsheets show as
// text; numbers ("-122.41") are left as they are. ?formulas=keep turns it
// off for byte-exact exports.

// FormulasKeep is the value of the export's formulas parameter that keeps
// formula-leading cells as they are (?format=csv&formulas=keep).
const FormulasKeep = "keep"

// neutraliseFormula returns a CSV text cell that a spreadsheet shows as
// text: s with a leading "'" when it would start a formula and is not a
// number.
func neutraliseFormula(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return s
		}
		return "'" + s
	}
	return s
}
