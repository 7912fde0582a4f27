package dualresp_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// A server whose links carry a key: LinkKey makes it (here an HMAC of the
// id under a secret of the server's), LinkHandler checks it. A caller
// who knows only the id gets the 404 of an unknown id.
func ExampleServer_LinkHandler() {
	secret := []byte("a secret of the server's")
	linkKey := func(id string) string {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(id))
		return hex.EncodeToString(m.Sum(nil)[:8])
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	srv, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, LinkKey: linkKey, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"fruit": fruitExecutor{}}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	mux.Handle("/k/", srv.LinkHandler(srv.Handler())) // and no /resources/: nobody reads by id alone

	resp, err := srv.CreateResponse(context.Background(), dualresp.Spec{Query: dualresp.Query{Kind: "fruit", Text: "a"}})
	if err != nil {
		log.Fatal(err)
	}
	link, id := resp.URL(), resp.ID()
	show := strings.NewReplacer(ts.URL, "", id, "ID", linkKey(id), "KEY")
	for _, u := range []string{
		link,
		link + "/export?format=csv",
		ts.URL + "/resources/" + id,
		ts.URL + "/k/" + strings.Repeat("0", 16) + "/resources/" + id,
	} {
		r, err := http.Get(u)
		if err != nil {
			log.Fatal(err)
		}
		r.Body.Close()
		fmt.Println(r.StatusCode, show.Replace(u))
	}

	// CheckLink is the check alone, for a server with its own routing.
	rest, ok := dualresp.CheckLink("/k/"+linkKey(id)+"/resources/"+id+"/export", linkKey)
	fmt.Println(ok, show.Replace(rest))
	_, ok = dualresp.CheckLink("/k/"+linkKey(id)+"/resources/0123456789abcdef0123456789abcdef", linkKey)
	fmt.Println(ok)
	// Output:
	// 200 /k/KEY/resources/ID
	// 200 /k/KEY/resources/ID/export?format=csv
	// 404 /resources/ID
	// 404 /k/0000000000000000/resources/ID
	// true /resources/ID/export
	// false
}

// A keyed link with "." or ".." segments is refused: what passes on names
// the id the key was checked for.
func TestCheckLinkRefusesDotSegments(t *testing.T) {
	t.Parallel()
	linkKey := func(id string) string { return "k" + id[:4] }
	id, other := "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	for _, p := range []string{
		"/k/" + linkKey(id) + "/resources/" + id + "/../" + other,
		"/k/" + linkKey(id) + "/resources/" + id + "/./export",
		"/k/" + linkKey(id) + "//resources/" + id,
	} {
		if rest, ok := dualresp.CheckLink(p, linkKey); ok {
			t.Errorf("CheckLink(%q) = %q, true; want refused", p, rest)
		}
	}
	if _, ok := dualresp.CheckLink("/k/"+linkKey(id)+"/resources/"+id+"/export", linkKey); !ok {
		t.Error("CheckLink refused a clean keyed link")
	}
}
