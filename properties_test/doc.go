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
// with TestFast do no network I/O and are cheap enough to run with more
// checks; CI (.ci/run) runs them again with
//
//	go test ./properties_test -run '^TestFast' -rapid.checks=1000
//
// The other tests talk to the fake portal over loopback and keep each check
// small (few requests), so that
//
//	go test -race ./properties_test
//
// finishes well within two minutes at the default check count.
package properties_test
