package localportal

import (
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Schema describes one dataset served by the portal: the Views API metadata
// and its columns. ID is the dataset's 4x4 identifier, such as "rqzj-sfat".
//
// Columns use the client's [socrata.Column] (name, fieldName, dataTypeName,
// description mean the same on both sides of the API). Schema itself is the
// portal's own type, not [socrata.Schema]: it carries what the portal
// publishes and the client never reads back as such (the publishing
// Department, shown in Discovery metadata), and not what only the client
// computes (RowCount comes from a count(*) query).
type Schema struct {
	ID          string
	Name        string
	Description string
	Category    string
	Department  string           // publishing department, shown in Discovery metadata
	Columns     []socrata.Column // DataType is the Views dataTypeName ("text", "number", "calendar_date", "checkbox", "point", ...)
	UpdatedAt   time.Time        // rowsUpdatedAt; the zero value means the load time
	// Signals are what the portal's Discovery API says of the dataset
	// besides its words: its tags and how much it is used.
	Signals Signals
}

// Signals are a dataset's tags, category and use, as Discovery gives them
// (classification.domain_tags, classification.domain_category,
// resource.page_views.page_views_total, resource.download_count). A
// catalog line without them leaves them zero, and Discovery then answers
// no tags and zero views, as it does for a dataset nobody opened.
type Signals struct {
	Tags      []string
	PageViews int64
	Downloads int64
}

// discoveryType is the display name the Discovery API uses in columns_datatype.
func discoveryType(dataType string) string {
	switch strings.ToLower(dataType) {
	case "number":
		return "Number"
	case "money":
		return "Money"
	case "percent":
		return "Percent"
	case "checkbox":
		return "Checkbox"
	case "calendar_date":
		return "Floating Timestamp"
	case "date":
		return "Date"
	case "point":
		return "Point"
	case "location":
		return "Location"
	case "url":
		return "URL"
	case "multipolygon":
		return "MultiPolygon"
	case "polygon":
		return "Polygon"
	case "line":
		return "Line"
	case "multiline":
		return "MultiLine"
	case "multipoint":
		return "MultiPoint"
	default:
		return "Text"
	}
}

// fieldKey canonicalises a field name for lookups, as Socrata compares
// column names (soql.CanonicalName).
func fieldKey(name string) string { return soql.CanonicalName(name) }

// fieldNameFor derives an API field name from a human column name or a CSV
// header ("Facility Type" -> "facility_type").
func fieldNameFor(header string) string {
	var b strings.Builder
	lastUnderscore := false
	for _, r := range strings.ToLower(strings.TrimSpace(header)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == ':' && b.Len() == 0, r == '@':
			b.WriteRune(r)
			lastUnderscore = false
		default:
			if !lastUnderscore && b.Len() > 0 {
				b.WriteByte('_')
				lastUnderscore = true
			}
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// isSystemField reports whether a field name is one of Socrata's hidden system
// fields that a table does not store (":id", ":created_at", ...). Computed
// region columns (":@computed_region_…") are stored like ordinary columns.
func isSystemField(field string) bool {
	return strings.HasPrefix(field, ":") && !strings.HasPrefix(field, ":@")
}

// isDatasetID reports whether s looks like a Socrata 4x4 identifier.
func isDatasetID(s string) bool {
	if len(s) != 9 || s[4] != '-' {
		return false
	}
	for i := 0; i < 9; i++ {
		if i == 4 {
			continue
		}
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
