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

// TestSessionsFairUnderAFlood: a client that floods initialize is refused
// at its bound, and ends only its own address's sessions: another key of
// the same address, another address and a new key still open sessions
// (the flooder's least recently used session ends to make room), the
// address never holds more than its bound, and a session another address
// holds never ends. The failure this guards against: 1,000 initialize from one local client gave
// every other local client, even with its own client key, 429.
func TestSessionsFairUnderAFlood(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(30*time.Minute, 100, func() time.Time { return now }, nil)
	s.maxPerClient = 10
	open := func(client string) (string, error) {
		if err := s.admit(client); err != nil {
			return "", err
		}
		now = now.Add(time.Second)
		return s.forClient(client).Generate(), nil
	}
	other, err := open("ip:127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	var flood []string
	refused := 0
	for range 1_000 {
		id, err := open("ip:127.0.0.1")
		if err != nil {
			refused++
			continue
		}
		flood = append(flood, id)
	}
	if len(flood) != 10 || refused != 990 {
		t.Errorf("1,000 initialize of one client with a bound of 10: %d sessions, %d refused; want 10, 990", len(flood), refused)
	}
	if _, err := open("ip:127.0.0.1/key-a"); err != nil {
		t.Fatalf("another key of the flooding address: admit = %v; want a session", err)
	}
	if term, _ := s.Validate(flood[0]); !term {
		t.Errorf("the flooder's least recently used session is live; want it ended to make room")
	}
	if _, err := open("ip:127.0.0.3"); err != nil {
		t.Errorf("another address after the flood: admit = %v; want a session", err)
	}
	for i := range 50 { // new keys, one session each, from the flooding address
		if _, err := open(fmt.Sprintf("ip:127.0.0.1/minted-%d", i)); err != nil {
			t.Fatalf("minted key %d: admit = %v; want a session (ending the address's own)", i, err)
		}
	}
	if n := s.perID["ip:127.0.0.1"]; n > 10 {
		t.Errorf("the flooding address holds %d sessions; want at most 10", n)
	}
	if term, err := s.Validate(other); term || err != nil {
		t.Errorf("another address's session after the flood: Validate = %v, %v; want live", term, err)
	}
}
