package socratatest

import (
	"net/http"
	"testing"
)

// Servers of one server's data serve it with faults and request logs of
// their own, cannot change it, and leave it to its owner when they close.
func TestDataOf(t *testing.T) {
	t.Parallel()
	data := smallServer(t)
	a := NewServer(t, WithDataOf(data))
	b := NewServer(t, WithDataOf(data))

	a.FailNext(1, http.StatusServiceUnavailable, 0)
	if r := serve(t, b, "/resource/abcd-1234.json?$limit=1"); r.Code != http.StatusOK {
		t.Errorf("b: status %d; want 200 (a's fault is a's)", r.Code)
	}
	if r := serve(t, a, "/resource/abcd-1234.json?$limit=1"); r.Code != http.StatusServiceUnavailable {
		t.Errorf("a: status %d; want its own 503", r.Code)
	}
	if got := [3]int{a.RequestCount(""), b.RequestCount(""), data.RequestCount("")}; got != [3]int{1, 1, 0} {
		t.Errorf("request counts of a, b and the data's server = %v; want [1 1 0]", got)
	}
	if got, want := a.Domain(), data.Domain(); got != want {
		t.Errorf("a.Domain() = %q; want the data's %q", got, want)
	}

	for name, err := range map[string]error{
		"AddGenerated": a.AddGenerated(t.Context(), Schema{ID: "wxyz-9876"}, 1, func(int) map[string]any { return nil }),
		"LoadFiles":    a.LoadFiles(t.Context(), t.TempDir()),
		"LoadCatalog":  a.LoadCatalog(t.Context(), "catalog.jsonl"),
		"AddDomain":    a.AddDomain("data.example.org"),
		"SetMoved":     a.SetMoved("old.example.org", "new.example.org"),
		"SetSODA3":     a.SetSODA3(false),
	} {
		if err == nil {
			t.Errorf("%s on a server of another's data = nil; want an error", name)
		}
	}
	if _, err := New(Options{DataOf: data, Domain: "data.example.org"}); err == nil {
		t.Error("New(DataOf and Domain) = nil error; want one")
	}

	a.Close()
	if r := serve(t, b, "/resource/abcd-1234.json?$limit=1"); r.Code != http.StatusOK {
		t.Errorf("b after a closed: status %d; want 200", r.Code)
	}
	if got := data.Datasets(); len(got) != 1 {
		t.Errorf("datasets after a closed = %v; want abcd-1234", got)
	}
}
