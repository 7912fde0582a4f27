package datasf

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/mark3labs/mcp-go/mcp"
)

// SchemaInput is get_schema's arguments. The domain argument's length is
// not in the schema, to keep tools/list short: package portal checks it
// (socrata.CheckDomain, portal.MaxSearchDomains).
type SchemaInput struct {
	DatasetID string `json:"dataset_id" validate:"required,fourbyfour" jsonschema:"4x4 id (e.g. \"wg3w-h783\") or URL."`
	Domain    string `json:"domain,omitempty" validate:"omitempty,cleantext"`
	Format    string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

func (in SchemaInput) format() string { return in.Format }

func schemaTool(s *toolServer) tool {
	return newTool[SchemaInput](toolDef{
		name:        "get_schema",
		title:       "Dataset schema",
		description: "A dataset's columns (fieldName to use in SoQL, type) and exact row count. Call it before query_datasf.",
		openWorld:   true,
	}, s.schema)
}

type schemaResult struct {
	Summary     string         `json:"summary"`
	DatasetID   string         `json:"dataset_id"`
	Domain      string         `json:"domain,omitempty"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Category    string         `json:"category,omitempty"`
	RowCount    int64          `json:"row_count"`
	Cached      bool           `json:"cached"`
	Columns     []schemaColumn `json:"columns"`
	// next is the next step Summary leaves out (summary.forCall).
	next NextStep
}

func (r schemaResult) nextLeftOut() NextStep { return r.next }

type schemaColumn struct {
	Name        string `json:"name"`
	FieldName   string `json:"fieldName"`
	DataType    string `json:"dataType"`
	Description string `json:"description,omitempty"`
	// NullShare is the share of rows without a value (0 to 1).
	NullShare *float64 `json:"null_share,omitempty"`
	// Values are the most frequent values of a text column with few
	// distinct values, written exactly as a WHERE clause compares them.
	Values []string `json:"values,omitempty"`
}

// maxSchemaDescription bounds a dataset's description in get_schema: the
// portal's text as plain text (its HTML and DataSF's "A. SUMMARY" heading
// left out), enough for the notes and summary a query needs; the
// dataset's page has the rest. DataSF's descriptions run to several KB of
// HTML (the police incident reports': 2,428 characters).
const maxSchemaDescription = 300

// maxColumnDescription bounds each column's description in get_schema: a
// sentence says what a column holds; DataSF's longest run to paragraphs.
const maxColumnDescription = 80

func (s *toolServer) schema(ctx context.Context, req mcp.CallToolRequest, in SchemaInput) (schemaResult, error) {
	p, err := s.portals.Get(ctx, strings.TrimSpace(in.Domain))
	if err != nil {
		return schemaResult{}, &opError{what: "the domain", err: err}
	}
	var (
		sc     *socrata.Schema
		cached bool
	)
	p, err = s.portals.Run(ctx, p, func(p *portal.Target) (err error) {
		sc, cached, err = p.Schemas.Schema(ctx, in.DatasetID)
		return err
	})
	if err != nil {
		return schemaResult{}, &opError{what: datasetName(p, in.DatasetID), hint: "Check the id with search_datasf.", err: err}
	}
	p, moved := s.portals.Moved(ctx, strings.TrimSpace(in.Domain), p)
	stats := map[string]*socrata.ColumnStats{}
	if hasStats(sc) {
		for _, c := range sc.Columns {
			stats[c.FieldName] = c.Stats
		}
	} else {
		key := func(p *portal.Target) string { return p.Domain + "/" + sc.ID + "/" + sc.UpdatedAt.String() }
		var ok bool
		if stats, ok = s.valueStats.Get(key(p)); !ok {
			// The statistics' queries go through the registry: a move
			// the portal answers to them (its schema was read before it
			// moved) is followed, and the answer says so.
			reader := s.portals.Reader(p)
			var complete bool
			stats, complete = queryStats(ctx, reader, sc)
			if now := reader.Portal(); now != p {
				p, moved = s.portals.Moved(ctx, strings.TrimSpace(in.Domain), now)
			}
			if complete {
				s.valueStats.Add(key(p), stats)
			}
		}
	}
	out := schemaResult{
		DatasetID: in.DatasetID, Domain: otherDomain(p), Name: sc.Name, Description: clipText(cleanDescription(sc.Description), maxSchemaDescription), Category: sc.Category,
		RowCount: sc.RowCount, Cached: cached, Columns: make([]schemaColumn, 0, len(sc.Columns)),
	}
	withValues := 0
	for _, c := range sc.Columns {
		col := schemaColumn{Name: c.Name, FieldName: c.FieldName, DataType: c.DataType, Description: clipText(strings.Join(strings.Fields(c.Description), " "), maxColumnDescription),
			NullShare: nullShare(stats[c.FieldName])}
		if withValues < maxValueColumns {
			if col.Values = fewValues(c, stats[c.FieldName]); col.Values != nil {
				withValues++
			}
		}
		out.Columns = append(out.Columns, col)
	}
	sum := summary{facts: fmt.Sprintf("%s (%s): %s, %s.", portalWords(sc.Name), in.DatasetID, nouns(int64(len(out.Columns)), "column", ""), nouns(sc.RowCount, "row", "")),
		next: "Use the fieldName values in query_datasf.", code: NextQuery}
	if out.Domain != "" {
		sum.facts = fmt.Sprintf("%s (%s on %s): %s, %s.", portalWords(sc.Name), in.DatasetID, out.Domain, nouns(int64(len(out.Columns)), "column", ""), nouns(sc.RowCount, "row", ""))
		sum.next = fmt.Sprintf("Use the fieldName values in query_datasf, with domain %s.", out.Domain)
	}
	if s.isCatalogOnly(p.Domain, in.DatasetID) {
		sum.facts += " " + catalogOnlyWords(in.DatasetID)
	}
	out.Summary, out.next = sum.forCall(req)
	out.Summary = s.sourceNotes(out.Summary, moved)
	return out, nil
}

// markdown is the summary and a table of the columns.
func (r schemaResult) markdown() string {
	var table strings.Builder
	table.WriteString(r.Summary + "\n\n")
	table.WriteString("| fieldName | type | name | nulls | values |\n|---|---|---|---|---|\n")
	for _, c := range r.Columns {
		nulls := ""
		if c.NullShare != nil {
			nulls = strconv.FormatFloat(*c.NullShare, 'f', -1, 64)
		}
		name := c.Name
		if sameName(name, c.FieldName) {
			name = "" // "Incident Datetime" says nothing incident_datetime does not
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s | %s |\n", cell(c.FieldName), cell(c.DataType), cell(name), nulls, cell(strings.Join(c.Values, "; ")))
	}
	return table.String()
}

// sameName reports whether a display name is its field name but for case
// and the spaces of underscores: the text's table leaves such a name out
// (the structured content has it).
func sameName(name, fieldName string) bool {
	return strings.EqualFold(strings.ReplaceAll(name, " ", "_"), fieldName)
}
