// Command smoke runs the command line's smoke queries against
// data.sf.gov (DataSF, formerly data.sfgov.org), as a user would, and
// checks each answer's shape and its exact totals against a second,
// independent query:
//
//   - search: the SFPD incident reports dataset is found, count = the hits;
//   - list: count = the datasets listed, each with a 4x4 id;
//   - schema: the columns the other queries use, with their types;
//   - a grouped query: its total_count is the number of groups (a chained
//     count), and its counts add up to count(*) of the same filter;
//   - query --all -o FILE.csv: a few thousand rows; the file holds exactly
//     count(*) records, and total_count says the same;
//   - a second portal via --domain (data.cityofchicago.org): its schema, and
//     a grouped count that adds up to count(*);
//   - the old name (--domain data.sfgov.org): the same count as on
//     data.sf.gov, the answer saying the portal moved and where it ran.
//     The old host refuses every query with an HTML 403
//     (testdata/evidence/live-portals-2026.jsonl); offline, the local
//     portal plays that old host;
//   - with -offline, a portal that moved to a name no table knows, played
//     by a local fake portal (an old host answering 301 to reads and an
//     nginx 403 to queries): the query through the old name is followed to
//     the new host and says so.
//
// When the portal cannot be reached it prints one line saying so and exits 0.
// With -offline the same checks run against the built-in offline portal
// (--offline), the second portal being a small CSV served with
// --data data.cityofchicago.org=ID=FILE, whose counts are known exactly.
//
//	go run ./cmd/smoke [-offline] BINARY
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

const (
	sfDomain  = "data.sf.gov"
	sfOldName = "data.sfgov.org" // DataSF's name until 2026-09
	chiDomain = "data.cityofchicago.org"
	incidents = "wg3w-h783" // Police Department Incident Reports: 2018 to Present
	chi311    = "v6vf-nfxy" // Chicago 311 Service Requests
)

// smoke runs the binary with the portal flags of the mode.
type smoke struct {
	bin     string
	offline bool
	dir     string // temporary files
	chiData string // offline: the CSV served as Chicago's 311
	// from, to bound the incidents of the grouped query and the export:
	// a window holding a few thousand rows in the mode's data.
	from, to string
}

var fourByFour = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)

func main() {
	offline := flag.Bool("offline", false, "run against the built-in offline portal (--offline)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: smoke [-offline] BINARY")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	bin, err := filepath.Abs(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	if !*offline {
		// A quick look before the first query: without a network this ends
		// in well under a second (the name does not resolve).
		conn, err := (&net.Dialer{Timeout: 5 * time.Second}).Dial("tcp", sfDomain+":443")
		if err != nil {
			fmt.Printf("smoke: skipped: %s cannot be reached (%v); `make smoke OFFLINE=1` runs the same checks offline\n", sfDomain, err)
			return
		}
		conn.Close()
	}
	dir, err := os.MkdirTemp("", "datasf-smoke-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	s := &smoke{bin: bin, offline: *offline, dir: dir, from: "2024-03-01T00:00:00", to: "2024-03-08T00:00:00"}
	mode := "against " + sfDomain
	if s.offline {
		mode = "against the offline portal (--offline)"
		// The offline snapshot has about 100 incidents a day; SFPD reports
		// about 400: a month here gives a few thousand rows, as a week does there.
		s.to = "2024-04-01T00:00:00"
		if s.chiData, err = writeChicagoCSV(dir); err != nil {
			fail(err)
		}
	}
	fmt.Println("smoke: the command line's smoke queries " + mode)
	checks := []struct {
		name string
		run  func() (string, error)
	}{
		{"search", s.search},
		{"list", s.list},
		{"schema", s.schema},
		{"grouped query", s.grouped},
		{"--all CSV export", s.export},
		{"second portal (--domain " + chiDomain + ")", s.secondPortal},
		{"old name (--domain " + sfOldName + ")", s.oldName},
	}
	if s.offline {
		checks = append(checks, struct {
			name string
			run  func() (string, error)
		}{"moved portal in a fake (--domain " + movedOld + ")", s.movedFake})
	}
	failed := 0
	for _, c := range checks {
		start := time.Now()
		what, err := c.run()
		took := time.Since(start).Round(10 * time.Millisecond)
		if err != nil {
			failed++
			fmt.Printf("smoke: FAIL %s (%s): %v\n", c.name, took, err)
			continue
		}
		fmt.Printf("smoke: ok   %s (%s): %s\n", c.name, took, what)
	}
	if failed > 0 {
		fmt.Printf("smoke: %d of %d checks failed\n", failed, len(checks))
		os.Exit(1)
	}
	fmt.Printf("smoke: all %d checks passed\n", len(checks))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "smoke:", err)
	os.Exit(2)
}

// run runs the binary with args and the mode's portal flags, and returns
// what it printed on stdout; an exit status other than 0 is an error
// carrying stderr.
func (s *smoke) run(args ...string) ([]byte, error) {
	if s.offline {
		args = append(args, "--offline")
		if s.chiData != "" {
			args = append(args, "--data", chiDomain+"="+chi311+"="+s.chiData)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	// The offline datasets are built into the user's cache directory, as for
	// any user: built once, reused by later runs.
	cmd.Env = append(os.Environ(), "DATASF_LOG_LEVEL=warn")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("datasf-mcp %s: %v\n%s%s", strings.Join(args, " "), err, stderr.Bytes(), stdout.Bytes())
	}
	return stdout.Bytes(), nil
}

// answer is the JSON a tool command prints (the fields the checks read).
type answer struct {
	Summary  string           `json:"summary"`
	Count    *int             `json:"count"`
	Results  []map[string]any `json:"results"`
	Columns  []column         `json:"columns"`
	Metadata *struct {
		TotalCount *int   `json:"total_count"`
		Truncated  bool   `json:"truncated"`
		Moved      string `json:"moved"`
		PortalURL  string `json:"portal_url"`
	} `json:"metadata"`
}

type column struct {
	FieldName string `json:"fieldName"`
	DataType  string `json:"dataType"`
}

func (s *smoke) call(args ...string) (*answer, error) {
	out, err := s.run(append(args, "--json")...)
	if err != nil {
		return nil, err
	}
	var a answer
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, fmt.Errorf("datasf-mcp %s printed no JSON answer (%v): %.300s", strings.Join(args, " "), err, out)
	}
	return &a, nil
}

// query runs SoQL with a sample large enough for every row it expects, and
// checks the answer's metadata is there.
func (s *smoke) query(id, soql string, extra ...string) (*answer, error) {
	a, err := s.call(append([]string{"query", id, soql, "--sample-size", "100"}, extra...)...)
	if err != nil {
		return nil, err
	}
	if a.Metadata == nil || a.Metadata.TotalCount == nil {
		return nil, fmt.Errorf("query %s %q: no metadata.total_count in the answer", id, soql)
	}
	return a, nil
}

// count returns count(*) of the dataset's rows matching where ("" for all).
func (s *smoke) count(id, where string, extra ...string) (int, error) {
	soql := "SELECT count(*) AS n"
	if where != "" {
		soql += " WHERE " + where
	}
	a, err := s.query(id, soql, extra...)
	if err != nil {
		return 0, err
	}
	if len(a.Results) != 1 {
		return 0, fmt.Errorf("%q answered %d rows; want 1", soql, len(a.Results))
	}
	return intField(a.Results[0], "n")
}

func intField(row map[string]any, name string) (int, error) {
	switch v := row[name].(type) {
	case string:
		return strconv.Atoi(v)
	case float64:
		return int(v), nil
	}
	return 0, fmt.Errorf("row %v: %s is not a number", row, name)
}

func (s *smoke) search() (string, error) {
	const text = "police incident reports"
	a, err := s.call("search", text, "--limit", "10")
	if err != nil {
		return "", err
	}
	if a.Count == nil || *a.Count != len(a.Results) || len(a.Results) == 0 {
		return "", fmt.Errorf("count %v with %d results; want the number of results, at least 1", a.Count, len(a.Results))
	}
	var ids []string
	for _, r := range a.Results {
		id, _ := r["id"].(string)
		if !fourByFour.MatchString(id) || r["name"] == "" {
			return "", fmt.Errorf("result %v: want a 4x4 id and a name", r)
		}
		ids = append(ids, id)
	}
	if !slices.Contains(ids, incidents) {
		return "", fmt.Errorf("%q found %v; want %s among them", text, ids, incidents)
	}
	return fmt.Sprintf("%d datasets for %q, %s among them", len(ids), text, incidents), nil
}

func (s *smoke) list() (string, error) {
	a, err := s.call("list")
	if err != nil {
		return "", err
	}
	if a.Count == nil || *a.Count != len(a.Results) || len(a.Results) == 0 {
		return "", fmt.Errorf("count %v with %d results; want the number of results, at least 1", a.Count, len(a.Results))
	}
	for _, r := range a.Results {
		if id, _ := r["id"].(string); !fourByFour.MatchString(id) {
			return "", fmt.Errorf("dataset %v: id is not a 4x4 id", r)
		}
	}
	return fmt.Sprintf("%d datasets, count = the datasets listed", len(a.Results)), nil
}

func (s *smoke) schema() (string, error) {
	a, err := s.call("schema", incidents)
	if err != nil {
		return "", err
	}
	types := map[string]string{}
	for _, c := range a.Columns {
		types[c.FieldName] = c.DataType
	}
	for field, want := range map[string]string{
		"incident_id": "text", "incident_category": "text", "police_district": "text",
	} {
		if got, ok := types[field]; !ok || got != want {
			return "", fmt.Errorf("column %s has type %q (present: %v); want %q", field, got, ok, want)
		}
	}
	if _, ok := types["incident_datetime"]; !ok {
		return "", errors.New("no incident_datetime column")
	}
	return fmt.Sprintf("%s: %d columns, incident_id, incident_category, police_district, incident_datetime among them", incidents, len(a.Columns)), nil
}

func (s *smoke) window() string {
	return fmt.Sprintf("incident_datetime >= '%s' AND incident_datetime < '%s'", s.from, s.to)
}

func (s *smoke) grouped() (string, error) {
	where := s.window()
	grouped := "SELECT police_district, count(*) AS n WHERE " + where + " GROUP BY police_district ORDER BY n DESC"
	a, err := s.query(incidents, grouped)
	if err != nil {
		return "", err
	}
	sum := 0
	for _, r := range a.Results {
		n, err := intField(r, "n")
		if err != nil {
			return "", err
		}
		sum += n
	}
	groups, err := s.query(incidents, grouped+" |> SELECT count(*) AS n")
	if err != nil {
		return "", err
	}
	nGroups, err := intField(groups.Results[0], "n")
	if err != nil {
		return "", err
	}
	total, err := s.count(incidents, where)
	if err != nil {
		return "", err
	}
	switch {
	case *a.Metadata.TotalCount != nGroups:
		return "", fmt.Errorf("total_count %d; the chained count says %d groups", *a.Metadata.TotalCount, nGroups)
	case a.Metadata.Truncated || len(a.Results) != nGroups:
		return "", fmt.Errorf("%d rows shown (truncated %v) of %d groups; want all", len(a.Results), a.Metadata.Truncated, nGroups)
	case sum != total:
		return "", fmt.Errorf("the groups' counts add up to %d; count(*) says %d", sum, total)
	case total == 0:
		return "", fmt.Errorf("no incidents between %s and %s", s.from, s.to)
	}
	return fmt.Sprintf("%d districts, total_count = the chained count; their counts add up to count(*) = %d", nGroups, total), nil
}

func (s *smoke) export() (string, error) {
	where := s.window()
	file := filepath.Join(s.dir, "incidents.csv")
	soql := "SELECT incident_id, incident_datetime, incident_category, police_district WHERE " + where + " ORDER BY incident_datetime, incident_id"
	// No --json: with --all it would choose the file's format. The answer
	// printed to a pipe is JSON anyway.
	out, err := s.run("query", incidents, soql, "--all", "-o", file)
	if err != nil {
		return "", err
	}
	var a answer
	if err := json.Unmarshal(out, &a); err != nil || a.Metadata == nil || a.Metadata.TotalCount == nil {
		return "", fmt.Errorf("query --all -o printed no answer with total_count (%v): %.300s", err, out)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if want := []string{"incident_id", "incident_datetime", "incident_category", "police_district"}; !slices.Equal(header, want) {
		return "", fmt.Errorf("CSV header %v; want %v", header, want)
	}
	records := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s record %d: %w", file, records+1, err)
		}
		if rec[0] == "" {
			return "", fmt.Errorf("%s record %d has no incident_id: %v", file, records+1, rec)
		}
		records++
	}
	total, err := s.count(incidents, where)
	if err != nil {
		return "", err
	}
	switch {
	case records != total:
		return "", fmt.Errorf("the CSV holds %d records; count(*) says %d", records, total)
	case *a.Metadata.TotalCount != total:
		return "", fmt.Errorf("total_count %d; count(*) says %d", *a.Metadata.TotalCount, total)
	case total < 1000:
		return "", fmt.Errorf("only %d rows between %s and %s; the export is meant to hold a few thousand", total, s.from, s.to)
	}
	return fmt.Sprintf("%d records = count(*) = total_count", records), nil
}

// chicagoStatuses are the offline Chicago CSV's statuses and how many rows
// have each.
var chicagoStatuses = map[string]int{"Completed": 17, "Open": 11, "Canceled": 4}

// writeChicagoCSV writes the offline stand-in for Chicago's 311 requests.
func writeChicagoCSV(dir string) (string, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"sr_number", "sr_type", "status", "created_date"})
	i := 0
	for _, status := range []string{"Completed", "Open", "Canceled"} {
		for range chicagoStatuses[status] {
			i++
			w.Write([]string{fmt.Sprintf("SR24-%06d", i), "Pothole in Street", status, fmt.Sprintf("2024-03-01T%02d:%02d:00", i%24, i%60)})
		}
	}
	w.Flush()
	path := filepath.Join(dir, "chicago-311.csv")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

func (s *smoke) secondPortal() (string, error) {
	domain := []string{"--domain", chiDomain}
	sc, err := s.call(append([]string{"schema", chi311}, domain...)...)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(sc.Columns, func(c column) bool { return c.FieldName == "status" }) {
		return "", fmt.Errorf("%s on %s: no status column in %v", chi311, chiDomain, sc.Columns)
	}
	where := "created_date >= '2024-03-01T00:00:00' AND created_date < '2024-03-02T00:00:00'"
	a, err := s.query(chi311, "SELECT status, count(*) AS n WHERE "+where+" GROUP BY status ORDER BY status", domain...)
	if err != nil {
		return "", err
	}
	got := map[string]int{}
	sum := 0
	for _, r := range a.Results {
		n, err := intField(r, "n")
		if err != nil {
			return "", err
		}
		status, _ := r["status"].(string)
		got[status] = n
		sum += n
	}
	total, err := s.count(chi311, where, domain...)
	if err != nil {
		return "", err
	}
	if sum != total || total == 0 {
		return "", fmt.Errorf("the statuses' counts add up to %d; count(*) says %d", sum, total)
	}
	if s.offline {
		for status, want := range chicagoStatuses {
			if got[status] != want {
				return "", fmt.Errorf("status %s: %d rows; the CSV has %d", status, got[status], want)
			}
		}
	}
	return fmt.Sprintf("%s on %s: %d statuses whose counts add up to count(*) = %d", chi311, chiDomain, len(got), total), nil
}

// oldName queries through the portal's old name: the same count as on its
// new one, and the answer says it moved and ran there.
func (s *smoke) oldName() (string, error) {
	where := s.window()
	a, err := s.query(incidents, "SELECT count(*) AS n WHERE "+where, "--domain", sfOldName)
	if err != nil {
		return "", err
	}
	n, err := intField(a.Results[0], "n")
	if err != nil {
		return "", err
	}
	total, err := s.count(incidents, where)
	if err != nil {
		return "", err
	}
	want := sfOldName + " has moved to " + sfDomain + "; this ran there."
	switch {
	case n != total:
		return "", fmt.Errorf("count(*) through %s is %d; on %s %d", sfOldName, n, sfDomain, total)
	case a.Metadata.Moved != want || !strings.Contains(a.Summary, want):
		return "", fmt.Errorf("the answer through %s says moved %q, summary %q; want %q", sfOldName, a.Metadata.Moved, a.Summary, want)
	case !s.offline && !strings.HasPrefix(a.Metadata.PortalURL, "https://"+sfDomain+"/"):
		return "", fmt.Errorf("portal_url %q; want it on https://%s/", a.Metadata.PortalURL, sfDomain)
	}
	return fmt.Sprintf("count(*) = %d as on %s; the answer says %q", n, sfDomain, want), nil
}

// The portal of the movedFake check: it moved from movedOld to movedNew,
// a move no table knows.
const (
	movedOld = "data.oldcity.example"
	movedNew = "data.newcity.example"
)

// movedFake runs a query against a local fake portal whose old host
// answers as data.sfgov.org's does: the server follows the move.
func (s *smoke) movedFake() (string, error) {
	ctx := context.Background()
	fake, err := localportal.New(localportal.Options{Domain: "api.us.socrata.com"})
	if err != nil {
		return "", err
	}
	defer fake.Close()
	p, err := fake.AddDomain(movedNew)
	if err != nil {
		return "", err
	}
	const rows = 30
	if err := p.AddGenerated(ctx, localportal.Schema{ID: "abcd-1234", Name: "Moved",
		Columns: []socrata.Column{{Name: "N", FieldName: "n", DataType: "number"}}}, rows,
		func(i int) map[string]any { return map[string]any{"n": i} }); err != nil {
		return "", err
	}
	if err := fake.SetMoved(movedOld, movedNew); err != nil {
		return "", err
	}
	if err := fake.Start(); err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, s.bin, "query", "abcd-1234", "SELECT count(*) AS n", "--domain", movedOld, "--json",
		"--base-url", fake.URL(), "--discovery-url", fake.URL())
	cmd.Env = append(os.Environ(), "DATASF_LOG_LEVEL=error", "DATASF_OFFLINE=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("datasf-mcp query --domain %s: %v\n%s%s", movedOld, err, stderr.Bytes(), stdout.Bytes())
	}
	var a answer
	if err := json.Unmarshal(stdout.Bytes(), &a); err != nil || a.Metadata == nil || len(a.Results) != 1 {
		return "", fmt.Errorf("no answer (%v): %.300s", err, stdout.Bytes())
	}
	n, err := intField(a.Results[0], "n")
	want := movedOld + " has moved to " + movedNew + "; this ran there."
	switch {
	case err != nil:
		return "", err
	case n != rows:
		return "", fmt.Errorf("count(*) through the move is %d; the fake holds %d", n, rows)
	case a.Metadata.Moved != want:
		return "", fmt.Errorf("the answer says moved %q; want %q", a.Metadata.Moved, want)
	}
	return fmt.Sprintf("count(*) = %d on %s, followed from %s; the answer says so", n, movedNew, movedOld), nil
}
