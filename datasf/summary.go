package datasf

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// NextStep is the code of a next step a successful answer's summary tells
// the model. A caller that asks for the next step apart (MetaNextStep) gets
// the answer without it, and its code as the value of MetaNextStep in the
// result's _meta, so that a front end can say a next step of its own (the
// command line names its commands and flags).
type NextStep string

// The next steps of successful answers.
const (
	// NextSchema: get_schema with one of the datasets' ids (search_datasf).
	NextSchema NextStep = "schema"
	// NextQuery: query_datasf with the columns' fieldNames (get_schema).
	NextQuery NextStep = "query"
	// NextBrowse: other or fewer words, or list_datasf to browse
	// (search_datasf found nothing).
	NextBrowse NextStep = "browse"
	// NextCategory: list_datasf with one of the categories the answer
	// lists (search_datasf or list_datasf found nothing).
	NextCategory NextStep = "category"
	// NextList: list_datasf without a category (list_datasf's category
	// has nothing on another portal).
	NextList NextStep = "list"
	// NextDomain: one of the listed portals as domain (list_datasf with
	// domain "*").
	NextDomain NextStep = "domain"
	// NextAnyDomain: any portal's host name as domain, or "*" to search
	// them all (list_datasf with domain "*", without Discovery's list).
	NextAnyDomain NextStep = "any_domain"
	// NextOffset: list_results from the answer's next_offset.
	NextOffset NextStep = "offset"
	// NextLinks: the result links query_datasf returned (list_results on
	// a connection without a session or a bearer token).
	NextLinks NextStep = "links"
)

// summary is an answer's summary in parts: what the answer found (facts),
// the model's next step in tools and arguments (next, "" when none) and its
// code (NextSchema, ...). Notes that follow (the portal moved, offline
// data) are joined after it by sourceNotes.
type summary struct {
	facts string
	next  string
	code  NextStep
	// clause is whether next ends the sentence of facts ("...; next.");
	// facts alone then end with a full stop. Otherwise next is sentences
	// of its own, after facts.
	clause bool
}

// forCall is the summary's text as the call asks for it, and the code of
// the next step it leaves out: the model's words whole, or, for a caller
// that asks for the next step apart (MetaNextStep), the facts alone and
// the next step's code.
func (s summary) forCall(req mcp.CallToolRequest) (text string, leftOut NextStep) {
	apart := wantsNextStep(req) && s.next != ""
	switch {
	case apart && s.clause:
		return s.facts + ".", s.code
	case apart:
		return s.facts, s.code
	case s.next == "":
		return s.facts, ""
	case s.clause:
		return s.facts + "; " + s.next, ""
	}
	return s.facts + " " + s.next, ""
}

// nextLeaver is a tool output whose summary may leave its next step out:
// nextLeftOut is the code of the step it left out, "" when none.
type nextLeaver interface {
	nextLeftOut() NextStep
}

// withNextLeftOut marks res with the code of the next step its answer
// left out, when it left one out.
func withNextLeftOut(res *mcp.CallToolResult, out any) *mcp.CallToolResult {
	n, ok := out.(nextLeaver)
	if !ok || n.nextLeftOut() == "" {
		return res
	}
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	res.Meta.SetMetaField(MetaNextStep, string(n.nextLeftOut()))
	return res
}
