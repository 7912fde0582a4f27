package properties_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// stack is the product assembled over a fake portal (package datasftest):
// the product with its REST API on a loopback listener and an initialized
// in-process MCP client session (with output schema validation).
type stack struct {
	*datasftest.Env
	client *socrata.Client
	mcp    *client.Client
}

// stackOptions configures a stack; the zero value gives the defaults.
type stackOptions struct {
	appToken  string
	userAgent string
	logger    *slog.Logger // for the Socrata client, dualresp and datasf
}

// newStack assembles a stack over fake. closeAll releases what it started,
// also when err is not nil.
func newStack(fake *socratatest.Server, o stackOptions) (st *stack, closeAll func(), err error) {
	env, err := datasftest.Start(context.Background(), datasftest.Options{
		PortalURL:  fake.URL(),
		ClientName: "properties-test",
		Config: datasf.Config{
			Socrata: socrata.Options{AppToken: o.appToken, UserAgent: o.userAgent, Logger: o.logger},
			Logger:  o.logger,
		},
	})
	if err != nil {
		return nil, func() {}, err
	}
	st = &stack{Env: env, client: env.Service.SocrataClient(), mcp: env.MCP}
	return st, func() { _ = env.Close() }, nil
}

// call runs a tool through the stack's MCP session.
func (st *stack) call(ctx context.Context, tool string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return st.mcp.CallTool(ctx, req)
}

// env is the fake portal shared by the whole test binary (loading it is
// slow), with the stack built over it.
type env struct {
	fake *socratatest.Server
	*stack
	catalogIDs []string // every dataset id of the catalog fixture
	words      []string // words of the catalog's titles, for search queries
}

// The ids of the datasets generated into the shared portal at start.
const (
	// peopleID has peopleRows rows: n (a unique number), name (text with
	// repeats and nulls), score (number with nulls), flag (checkbox with
	// nulls), day (calendar_date) and note (text, sometimes long).
	peopleID   = "prop-0001"
	peopleRows = 400
)

var peopleSchema = socratatest.Schema{
	ID: peopleID, Name: "Property test people", Description: "Generated rows for property tests.",
	Category: "Testing",
	Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Name", FieldName: "name", DataType: "text"},
		{Name: "Score", FieldName: "score", DataType: "number"},
		{Name: "Flag", FieldName: "flag", DataType: "checkbox"},
		{Name: "Day", FieldName: "day", DataType: "calendar_date"},
		{Name: "Note", FieldName: "note", DataType: "text"},
	},
}

var peopleNames = []string{"ada", "bob", "cy", "dee", "eve", "Ada", "zoë", "o'neil"}

func peopleRow(i int) map[string]any {
	row := map[string]any{"n": i}
	if i%7 != 3 {
		row["name"] = peopleNames[(i*5)%len(peopleNames)]
	}
	if i%5 != 1 {
		row["score"] = (i * 37) % 101
	}
	if i%4 != 2 {
		row["flag"] = i%3 == 0
	}
	row["day"] = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i%50) * 24 * time.Hour)
	switch i % 11 {
	case 0:
		row["note"] = strings.Repeat("long note "+fmt.Sprint(i)+" ", 60)
	case 5:
	default:
		row["note"] = fmt.Sprintf("note %d", i)
	}
	return row
}

var shared struct {
	once     sync.Once
	e        *env
	closeAll func()
	err      error
}

// genCounter makes the ids of datasets generated during the tests unique.
var genCounter atomic.Int64

// newDatasetID returns a fresh 4x4 id for a generated dataset.
func newDatasetID() string {
	n := genCounter.Add(1)
	return fmt.Sprintf("g%03d-%04d", (n/10000)%1000, n%10000)
}

// sharedEnv returns the shared portal and stack, building them on first use.
func sharedEnv(t testing.TB) *env {
	t.Helper()
	shared.once.Do(func() {
		shared.e, shared.closeAll, shared.err = buildEnv()
	})
	if shared.err != nil {
		t.Fatalf("building the shared fake portal: %v", shared.err)
	}
	return shared.e
}

// buildEnv starts the shared portal: its data is its own (the tests
// generate datasets into it), the fixtures (fixtureportal.Load) and the
// generated people.
func buildEnv() (e *env, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	e = &env{}
	if e.fake, err = socratatest.Start(socratatest.Options{}); err != nil {
		return nil, closeAll, err
	}
	closers = append(closers, e.fake.Close)
	if err := fixtureportal.Load(context.Background(), e.fake); err != nil {
		return nil, closeAll, err
	}
	catalogs, _, err := fixtureportal.Files()
	if err != nil {
		return nil, closeAll, err
	}
	seenWord := map[string]bool{}
	for _, c := range catalogs {
		ids, titles, err := readCatalog(c)
		if err != nil {
			return nil, closeAll, err
		}
		e.catalogIDs = append(e.catalogIDs, ids...)
		for _, title := range titles {
			for _, w := range strings.Fields(strings.ToLower(title)) {
				w = strings.Trim(w, ":,.()'\"")
				if len(w) > 2 && !seenWord[w] {
					seenWord[w] = true
					e.words = append(e.words, w)
				}
			}
		}
	}
	if err := e.fake.AddGenerated(context.Background(), peopleSchema, peopleRows, peopleRow); err != nil {
		return nil, closeAll, err
	}
	var stClose func()
	e.stack, stClose, err = newStack(e.fake, stackOptions{})
	closers = append(closers, stClose)
	if err != nil {
		return nil, closeAll, err
	}
	return e, closeAll, nil
}

// readCatalog reads the ids and titles of a catalog JSONL file.
func readCatalog(path string) (ids, titles []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Endpoint string `json:"endpoint"`
			ID       string `json:"id"`
			Title    string `json:"title"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		id := line.Endpoint
		if id == "" {
			id = line.ID
		}
		if id == "" {
			return nil, nil, errors.New(path + ": a line without endpoint or id")
		}
		ids = append(ids, id)
		titles = append(titles, line.Title)
	}
	return ids, titles, sc.Err()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.closeAll != nil {
		shared.closeAll()
	}
	os.Exit(code)
}

// resultJSON is a tool result as a client receives it: its JSON encoding
// decoded into generic values.
func resultJSON(t interface{ Fatalf(string, ...any) }, res *mcp.CallToolResult) (raw []byte, v map[string]any) {
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("encoding the tool result: %v", err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding the tool result %s: %v", raw, err)
	}
	return raw, v
}

// structuredOf returns the structured content of a successful result as
// generic JSON values, failing when the result is an error or has none.
func structuredOf(t interface{ Fatalf(string, ...any) }, what string, res *mcp.CallToolResult) map[string]any {
	raw, v := resultJSON(t, res)
	if res.IsError {
		t.Fatalf("%s = isError %s; want a success", what, raw)
	}
	sc, ok := v["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("%s: structuredContent is %T, want an object: %s", what, v["structuredContent"], raw)
	}
	return sc
}

// canon re-encodes any JSON-encodable value into generic JSON values, so
// that values decoded by different code compare equal.
func canon(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable %T: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprintf("undecodable %s: %v", b, err)
	}
	return out
}

// canonRaw decodes one raw JSON value into generic JSON values.
func canonRaw(b []byte) any {
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprintf("undecodable %s: %v", b, err)
	}
	return out
}
