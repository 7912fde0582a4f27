package datasf

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/mark3labs/mcp-go/mcp"
)

// list_results' limits: its input schema and its validation use them.
const (
	MaxListResultsLimit     = 100 // results per answer
	DefaultListResultsLimit = 20
	// MaxResultsPerOwner is how many result ids list_results remembers for
	// one session or bearer token (the newest); it also bounds offset.
	MaxResultsPerOwner = 200
)

// ListResultsInput is list_results' arguments. A nil Limit means
// DefaultListResultsLimit, a nil Offset 0.
type ListResultsInput struct {
	Limit  *int   `json:"limit,omitempty" validate:"omitnil,min=1,max=100" default:"20"`
	Offset *int   `json:"offset,omitempty" validate:"omitnil,min=0,max=200" default:"0" jsonschema:"The next_offset of the previous answer."`
	Format string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

func (in ListResultsInput) format() string { return in.Format }

func listResultsTool(s *toolServer) tool {
	return newTool[ListResultsInput](toolDef{
		name:        "list_results",
		title:       "List stored results",
		description: "This session's stored results, newest first: dataset, query, rows, link. Reuse one instead of re-running a query.",
	}, s.listResults)
}

type listResultsOutput struct {
	Summary    string       `json:"summary"`
	Count      int          `json:"count"`
	Total      int          `json:"total"`
	Offset     int          `json:"offset"`
	NextOffset *int         `json:"next_offset"`
	Results    []resultItem `json:"results"`
	// next is the next step Summary leaves out (summary.forCall).
	next NextStep
}

func (out listResultsOutput) nextLeftOut() NextStep { return out.next }

type resultItem struct {
	ID         string   `json:"id"`
	URI        string   `json:"uri"`
	URL        string   `json:"url"`
	Name       string   `json:"name"`
	DatasetID  string   `json:"dataset_id,omitempty"`
	Domain     string   `json:"domain,omitempty"` // the portal, when not the configured one
	Query      string   `json:"query,omitempty"`
	TotalCount int64    `json:"total_count"`
	Columns    []string `json:"columns"`
	CreatedAt  string   `json:"created_at,omitempty"`
	ExpiresAt  *string  `json:"expires_at"`
	Pinned     bool     `json:"pinned"`
}

func (s *toolServer) listResults(ctx context.Context, req mcp.CallToolRequest, in ListResultsInput) (listResultsOutput, error) {
	limit, offset := or(in.Limit, DefaultListResultsLimit), or(in.Offset, 0)
	out := listResultsOutput{Results: []resultItem{}, Offset: offset}
	ids := s.session.list(ctx)
	var live []*dualresp.Record
	for i := len(ids) - 1; i >= 0; i-- { // newest first
		rec, err := s.results.Resource(ctx, ids[i])
		if err != nil {
			continue // expired or deleted
		}
		live = append(live, rec)
	}
	out.Total = len(live)
	for i, rec := range live {
		if i < offset {
			continue
		}
		if len(out.Results) == limit {
			next := i
			out.NextOffset = &next
			break
		}
		it := resultItem{
			ID: rec.ID, URI: s.results.URI(rec.ID), URL: s.results.URL(rec.ID), Name: rec.Name, Query: rec.Query.Text,
			TotalCount: rec.TotalCount, Columns: make([]string, 0, len(rec.Columns)), CreatedAt: rec.CreatedAt.UTC().Format(time.RFC3339),
			Pinned: rec.Pinned, DatasetID: rec.Query.Params["dataset_id"], Domain: rec.Query.Params["domain"],
		}
		for _, c := range rec.Columns {
			it.Columns = append(it.Columns, c.Name)
		}
		if !rec.Pinned && !rec.ExpiresAt.IsZero() {
			e := rec.ExpiresAt.UTC().Format(time.RFC3339)
			it.ExpiresAt = &e
		}
		out.Results = append(out.Results, it)
	}
	out.Count = len(out.Results)
	switch {
	case resultsOwner(ctx) == "":
		out.Summary, out.next = summary{facts: "This connection has no session and no bearer token, so no results are listed to it",
			next: "use the links that query_datasf returned.", code: NextLinks, clause: true}.forCall(req)
	case out.NextOffset != nil:
		out.Summary, out.next = summary{facts: fmt.Sprintf("Results %d-%d of %s of this session, newest first.", offset+1, offset+out.Count, nouns(int64(out.Total), "stored result", "")),
			next: fmt.Sprintf("More: offset %d.", *out.NextOffset), code: NextOffset}.forCall(req)
	case offset == 0:
		out.Summary = nouns(int64(out.Total), "stored result", "") + " in this session, newest first."
		if out.Total == 1 {
			out.Summary = "1 stored result in this session."
		}
		if out.Total == 0 {
			out.Summary = "No stored result in this session: query_datasf stores each result it answers."
		}
	default:
		out.Summary = fmt.Sprintf("%s in this session; %d shown from offset %d.", nouns(int64(out.Total), "stored result", ""), out.Count, offset)
	}
	return out, nil
}

// markdown is the summary and a table in which each row tells one result
// from the others: its dataset, its query (shortened in the middle), its
// size and its age.
func (out listResultsOutput) markdown() string {
	var table strings.Builder
	table.WriteString(out.Summary + "\n\n")
	table.WriteString("| dataset | query | rows | created | expires | url |\n|---|---|---|---|---|---|\n")
	for _, it := range out.Results {
		exp := "never"
		if it.ExpiresAt != nil {
			exp = shortTime(*it.ExpiresAt)
		}
		dataset := it.DatasetID
		if dataset == "" {
			dataset = it.Name
		}
		if it.Domain != "" {
			dataset += " on " + it.Domain
		}
		fmt.Fprintf(&table, "| %s | %s | %d | %s | %s | %s |\n", cell(dataset), cell(middleCut(it.Query, listQueryRunes)), it.TotalCount, shortTime(it.CreatedAt), exp, it.URL)
	}
	return table.String()
}

// listQueryRunes is how much of a query a list_results row shows.
const listQueryRunes = 72

// middleCut shortens s to n runes by cutting its middle, where a long
// query's least telling part is (the start says what it selects, the end
// how it filters, groups and orders).
func middleCut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// shortTime writes an RFC 3339 time as "2026-11-25 04:31:07Z".
func shortTime(t string) string {
	return strings.Replace(t, "T", " ", 1)
}
