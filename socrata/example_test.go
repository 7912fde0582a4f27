package socrata_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

func ExampleClient_Query() {
	// A stand-in for data.sfgov.org (tests use socratatest for a real fake).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-SODA2-Fields", `["facilitytype","n"]`)
		w.Header().Set("X-SODA2-Types", `["text","number"]`)
		fmt.Fprint(w, `[{"facilitytype":"Truck","n":"301"},{"facilitytype":"Push Cart","n":"29"}]`)
	}))
	defer srv.Close()

	c := socrata.NewClient(socrata.Options{BaseURL: srv.URL})
	res, err := c.Query(context.Background(), "rqzj-sfat",
		"SELECT facilitytype, count(*) AS n GROUP BY facilitytype ORDER BY n DESC LIMIT 2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Fields, res.Types)
	for _, row := range res.Rows {
		fmt.Println(row["facilitytype"], row["n"])
	}
	// Output:
	// [facilitytype n] [text number]
	// Truck 301
	// Push Cart 29
}

func ExampleAPIError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"message":"Query coordinator error: query.soql.no-such-column; No such column: aplicant",`+
			`"errorCode":"query.soql.no-such-column","data":{"column":"aplicant"}}`)
	}))
	defer srv.Close()

	c := socrata.NewClient(socrata.Options{BaseURL: srv.URL})
	_, err := c.Query(context.Background(), "rqzj-sfat", "SELECT aplicant")
	var api *socrata.APIError
	if errors.As(err, &api) {
		fmt.Println(api.StatusCode, api.Code, api.Data["column"])
	}
	fmt.Println(err)
	// Output:
	// 400 query.soql.no-such-column aplicant
	// socrata: resource API answered HTTP 400 (query.soql.no-such-column): Query coordinator error: query.soql.no-such-column; No such column: aplicant
}
