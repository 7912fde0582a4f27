package datasf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/hints"
	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/mark3labs/mcp-go/mcp"
)

// query_datasf's limits: its input schema and its validation use them.
const (
	MaxSoQL       = 16000 // characters of soql: a long IN list fits; SODA3 takes it in a body, SODA 2.1 in a URL
	MaxSampleSize = 100   // sample rows per answer
	// DefaultSampleSize is the sample size when neither the call nor
	// toolServerOptions.DefaultSampleSize gives one.
	DefaultSampleSize = 15
)

// QueryInput is query_datasf's arguments. A nil AutoCorrect means true; a
// nil SampleSize means the server's default.
type QueryInput struct {
	DatasetID   string `json:"dataset_id" validate:"required,fourbyfour" jsonschema:"4x4 id (e.g. \"wg3w-h783\") or URL."`
	SoQL        string `json:"soql" validate:"required,cleansoql,notblank,min=1,max=16000" jsonschema:"e.g. \"SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC\", with fieldNames from get_schema."`
	AutoCorrect *bool  `json:"auto_correct,omitempty" default:"true" jsonschema:"Correct misspelt column names."`
	SampleSize  *int   `json:"sample_size,omitempty" validate:"omitnil,min=1,max=100"`
	Domain      string `json:"domain,omitempty" validate:"omitempty,cleantext"`
	Format      string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
	Image       *bool  `json:"image,omitempty"`
}

func (in QueryInput) format() string { return in.Format }

// queryAnswer is query_datasf's output: a dual response, whose structured
// content (dualresp.Structured) may also carry hints (package hints).
type queryAnswer struct {
	resp *dualresp.Response
	// png and pictureText are the picture asked for with image (image.go).
	png         []byte
	pictureText string
}

func (a queryAnswer) response() *dualresp.Response { return a.resp }

func queryTool(s *toolServer) tool {
	return newTool[QueryInput](toolDef{
		name:        "query_datasf",
		title:       "Query a dataset",
		description: "Run SoQL on a dataset. Returns a SAMPLE of rows, the exact total (metadata.total_count) and resource.url, the complete result for the user. Answer with aggregates (GROUP BY, count(*), sum); never page through results. No FROM; text comparison is case-sensitive; quote dates ('2024-01-01').",
		openWorld:   true,
	}, s.query)
}

func (s *toolServer) query(ctx context.Context, _ mcp.CallToolRequest, in QueryInput) (queryAnswer, error) {
	// The query is parsed once; correction, the local checks, the count,
	// the sample, the hints and the stored query all use this tree.
	parsed, err := soql.Parse(in.SoQL)
	if err != nil {
		return queryAnswer{}, syntaxError(err)
	}
	p, err := s.portals.Get(ctx, strings.TrimSpace(in.Domain))
	if err != nil {
		return queryAnswer{}, &opError{what: "the domain", err: err}
	}
	// A portal that moved (known, or answered to the schema read) runs
	// on its new host, and the answer says so.
	var sc *socrata.Schema
	p, err = s.portals.Run(ctx, p, func(p *portal.Target) (err error) {
		sc, _, err = p.Schemas.Schema(ctx, in.DatasetID)
		return err
	})
	if err != nil {
		return queryAnswer{}, &opError{what: datasetName(p, in.DatasetID), hint: "Check the id with search_datasf.", err: err}
	}
	p, moved := s.portals.Moved(ctx, strings.TrimSpace(in.Domain), p)
	domain := otherDomain(p)
	// A bare word compared with a text column is a value without quotes,
	// not a column to correct (mistakes.go).
	if te := unquotedValue(parsed, in.DatasetID, sc); te != nil {
		return queryAnswer{}, te
	}
	fixed := fuzzymatch.Result{Query: in.SoQL}
	if or(in.AutoCorrect, true) {
		fixed = correctNames(parsed, in.SoQL, sc)
	}
	corrections := fixed.Corrections
	// What the portal would refuse is answered now, in its words
	// (checks.go). Positions point into the query as the model wrote it.
	if te := localCheck(parsed, in.SoQL, in.DatasetID, sc, fixed); te != nil {
		return queryAnswer{}, te
	}
	stable := parsed.WithStableOrderFor(schemaFields(sc))

	sampleSize := or(in.SampleSize, s.sample)
	if sampleSize == 0 {
		sampleSize = DefaultSampleSize
	}
	// What a model needs on every call, said once: the dataset's name is
	// the resource's name, and the query run is the $query of portal_url
	// (QueryStated below; the record and the REST metadata keep it).
	meta := map[string]any{"dataset_id": in.DatasetID}
	name := sc.Name
	if domain != "" {
		meta["domain"] = domain
		name += " (" + domain + ")"
	}
	if len(corrections) > 0 {
		meta["corrections"] = corrections
	}
	if len(fixed.Ambiguous) > 0 {
		meta["ambiguous"] = fixed.Ambiguous
	}
	if fixed.Query != in.SoQL {
		meta["original_query"] = in.SoQL
	}
	// Provenance (provenance.go): how fresh the rows are, and the URL that
	// runs this query on the portal; offline, where the data comes from.
	footer := s.offline
	if footer == "" {
		portalURL := portalQueryURL(p.Domain, in.DatasetID, stable.String())
		meta["portal_url"] = portalURL
		// The query run is stated once, URL-encoded in portal_url; the
		// text says how fresh the rows are.
		footer = provenanceLine(sc.UpdatedAt)
	} else {
		meta["data_source"] = footer
	}
	if !sc.UpdatedAt.IsZero() {
		meta["as_of"] = sc.UpdatedAt.UTC().Format(time.RFC3339)
	}
	notes := correctionNotes(corrections, fixed.Query)
	if moved != "" {
		meta["moved"] = moved
		notes = append(notes, moved)
	}
	// One call: the count and the sample run concurrently (two upstream
	// requests) on the resolved portal with the parsed tree, and the
	// sample's response headers give the columns.
	plan := s.portals.NewQuery(p, in.DatasetID, stable)
	keys, countCol := groupKeys(parsed)
	var keyCols []string
	for _, k := range keys {
		keyCols = append(keyCols, k.name)
	}
	resp, err := s.results.CreateResponse(ctx, dualresp.Spec{
		Name:        name,
		Description: stable.String(),
		Query:       plan.Stored(),
		Plan:        plan,
		SampleSize:  sampleSize,
		Metadata:    meta,
		Owner:       recordOwner(ctx),
		Notes:       notes,
		Footer:      footer,
		QueryStated: true,
		Keys:        keyCols, // a null group is null in the text (nulls.go)
	})
	var store *dualresp.StorageError
	switch {
	case errors.As(err, &store):
		return queryAnswer{}, &toolError{Reason: "The result could not be stored: " + err.Error(), Type: errAPI}
	case err != nil:
		return queryAnswer{}, queryError(err, datasetName(p, in.DatasetID), sc)
	}
	s.session.add(ctx, resp.ID())
	// The null group's count and the hints read the portal the count and
	// the sample ran on, through the registry (a move answered to any of
	// them is followed).
	reader := plan.Reader()
	if note := topNullNote(ctx, reader, in.DatasetID, parsed, keys, countCol, resp, s.log); note != "" {
		resp = resp.WithNotes(note)
	}
	switch h := s.catalogOnlyHint(p.Domain, in.DatasetID); {
	case h != nil:
		// No data offline: the conditions are not what made it empty.
		resp = resp.WithHints(*h)
	case hints.Empty(resp, parsed):
		resp = resp.WithHints(hints.Find(ctx, reader, in.DatasetID, parsed, sc, s.log)...)
	}
	if now := reader.Portal(); now != p {
		// The portal answered a move after its schema was read (from the
		// cache): the rows are the new host's, and the answer says so.
		if _, line := s.portals.Moved(ctx, strings.TrimSpace(in.Domain), now); line != "" && line != moved {
			resp = resp.WithNotes(line)
		}
	}
	if plan.Stale() {
		resp = resp.WithHints(newStaleHint(reader.Portal().Domain))
	}
	out := queryAnswer{resp: resp}
	if in.Image != nil && *in.Image {
		out.png, out.pictureText = s.drawPicture(ctx, resp, stable.String())
	}
	return out, nil
}

// correctNames corrects the misspelt column names of parsed, the tree of
// text, against sc's columns: fuzzymatch decides from the names the tree
// holds, and the tree is renamed in place, with text re-spelt at the
// renamed references' positions in Result.Query. A display name
// ("Category") is corrected to its field name. Nothing is parsed again.
func correctNames(parsed *soql.Query, text string, sc *socrata.Schema) fuzzymatch.Result {
	refs, aliases := parsed.Names()
	fixed := fuzzymatch.Match(fuzzymatch.Names{Refs: refs, Aliases: aliases}, fieldNames(sc), fuzzymatch.Options{DisplayNames: displayNames(sc)})
	fixed.Query = parsed.Rename(text, fixed.Renames())
	return fixed
}

// correctionNotes are the sentences an answer must carry when column names
// were corrected: each correction, and the query that ran.
func correctionNotes(corrections []fuzzymatch.Correction, ran string) []string {
	if len(corrections) == 0 {
		return nil
	}
	pairs := make([]string, len(corrections))
	for i, c := range corrections {
		pairs[i] = c.Original + " → " + c.Corrected
	}
	return []string{"Column names corrected: " + strings.Join(pairs, ", ") + " (the query run: " + ran + ")."}
}

// syntaxError answers a SoQL syntax error locally, with its position.
func syntaxError(err error) *toolError {
	var se *soql.SyntaxError
	if errors.As(err, &se) && se.Got == "FROM" {
		return &toolError{Reason: "SoQL has no FROM: the dataset is the dataset_id argument.",
			Next: fmt.Sprintf("Remove FROM and the name after it (line %d, column %d), and call query_datasf again.", se.Pos.Line, se.Pos.Column),
			Type: errValidation, Code: "soql_syntax",
			Details: map[string]any{"line": se.Pos.Line, "column": se.Pos.Column, "expected": se.Expected, "got": se.Got}}
	}
	if errors.As(err, &se) {
		return &toolError{Reason: "soql has a syntax error: " + se.Error() + ".", Next: "Fix the query and call query_datasf again.",
			Type: errValidation, Code: "soql_syntax",
			Details: map[string]any{"line": se.Pos.Line, "column": se.Pos.Column, "expected": se.Expected, "got": se.Got}}
	}
	return validationError("soql could not be read: "+err.Error(), nil)
}

// queryError translates a failed query, adding the closest real columns when
// Socrata says a column does not exist. datasetID names the dataset (with
// its domain when it is not the configured portal's).
func queryError(err error, datasetID string, sc *socrata.Schema) error {
	var api *socrata.APIError
	if errors.As(err, &api) && api.Code == "query.soql.no-such-column" {
		col, _ := api.Data["column"].(string)
		close := fuzzymatch.Closest(col, fieldNames(sc), 5)
		if close == nil {
			close = []string{} // an empty list, not null, for the model
		}
		msg := fmt.Sprintf("No such column %q in %s (%s).", col, datasetID, api.Message)
		if len(close) > 0 {
			msg += " Closest columns: " + strings.Join(close, ", ") + "."
		}
		return &toolError{Reason: msg, Next: "Call get_schema for the full list.", Type: errValidation, Code: "no_such_column", Details: map[string]any{
			"code": api.Code, "column": col, "closest_columns": close, "socrata_message": api.Message,
		}}
	}
	return &opError{what: "the query on " + datasetID, hint: "Check the id with search_datasf.", err: err}
}
