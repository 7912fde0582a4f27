package mcphttp

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSessionsEnd: a session ends when idle or on Terminate, never because
// newer sessions came (past the bound, admit refuses them); ended sessions
// are reported as terminated, never-issued ids as unknown, and each end is
// reported once.
func TestSessionsEnd(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ended []string
	s := newSessions(10*time.Minute, 3, func() time.Time { return now }, func(id string) { ended = append(ended, id) })

	a := s.Generate()
	if term, err := s.Validate(a); term || err != nil {
		t.Fatalf("Validate(new session) = %v, %v; want live", term, err)
	}
	if _, err := s.Validate("mcp-session-0123"); err == nil {
		t.Error("Validate(never issued) = nil error; want unknown")
	}
	if _, err := s.Validate(""); err == nil {
		t.Error("Validate(\"\") = nil error; want an error")
	}

	now = now.Add(9 * time.Minute) // a use keeps it alive
	if term, err := s.Validate(a); term || err != nil {
		t.Fatalf("Validate after 9 idle minutes = %v, %v; want live", term, err)
	}
	now = now.Add(11 * time.Minute)
	if term, err := s.Validate(a); !term || err != nil {
		t.Errorf("Validate after 11 idle minutes = %v, %v; want terminated", term, err)
	}

	b := s.Generate()
	if _, err := s.Terminate(b); err != nil {
		t.Fatal(err)
	}
	if term, _ := s.Validate(b); !term {
		t.Error("Validate after Terminate: not terminated")
	}

	var many []string
	for i := range 4 {
		err := s.admit("ip:127.0.0.1")
		if i == 3 {
			var tooMany *errTooManySessions
			if !errors.As(err, &tooMany) {
				t.Errorf("admit of a 4th session over a bound of 3 = %v; want *errTooManySessions", err)
			}
			break
		}
		if err != nil {
			t.Fatalf("admit of session %d of 3 = %v", i+1, err)
		}
		many = append(many, s.forClient("ip:127.0.0.1").Generate())
	}
	if term, _ := s.Validate(many[0]); term {
		t.Errorf("the oldest of 3 sessions at a bound of 3 ended")
	}
	if s.Len() != 3 {
		t.Errorf("Len = %d; want 3", s.Len())
	}
	if got, want := fmt.Sprint(ended), fmt.Sprint([]string{a, b}); got != want {
		t.Errorf("ended = %s; want %s", got, want)
	}
}
