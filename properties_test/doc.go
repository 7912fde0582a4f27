// Package properties_test holds the property tests (pgregory.net/rapid) of
// datasf-mcp: the 16 correctness properties of the DataSF design and the
// dual-response invariants D1–D7. Each Test function's comment names the
// property it checks. They exercise the real packages (validate, soql,
// fuzzymatch, socrata, schemacache, dualresp, datasf) and, where a portal is
// involved, one fake Socrata server (socrata/socratatest) shared by the test
// binary, loaded with the real fixtures and with generated datasets.
//
// Every property runs rapid's default of 100 checks and is reproducible with
// -rapid.seed (rapid prints the seed of a failure). Tests whose names start
// with TestFast are cheap enough to run with more checks (they call pure
// functions, or send one query to the shared fake); CI (.ci/run) runs them
// again with
//
//	go test -tags e2e ./properties_test -run '^TestFast' -rapid.checks=1000
//
// Those of the byte budget, and TestAppTokenOnEveryRequest, are in the e2e
// tier (the *_e2e_test.go files, build tag e2e): make test runs them
// without the race detector, go test ./... not at all.
//
// The other tests talk to the fake portal over loopback and keep each check
// small (few requests). The costliest is TestAppTokenOnEveryRequest: the
// token is part of the product's configuration, so each check builds a
// product of its own, and the first search of a new product reads and
// indexes the portal's whole catalog.
package properties_test
