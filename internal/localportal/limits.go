package localportal

// What one answer can make the portal hold, beside the bounds on the
// values a query makes (package soqlsqlite: 1 MiB a value, LIKE patterns
// and LIKE's work). The real portal's bounds are not known; these leave
// every result of the offline data sets far inside.
const (
	// maxRowBytes bounds one row of a result as the Resource API encodes it
	// (many long values side by side).
	maxRowBytes = 4 << 20
	// maxPageBytes bounds one answer's rows as encoded: the portal streams
	// them, but the client holds the page it asked for. The product's
	// exports ask for pages of 16 MiB at most (internal/portal).
	maxPageBytes = 64 << 20
)
