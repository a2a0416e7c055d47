package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTickets: a call id opens one run of the command it was issued for,
// once, in its time; every other use is an ErrTicket that says why.
func TestTickets(t *testing.T) {
	state := t.TempDir()
	now := time.Now()
	issue := func(command string, expires time.Time) string {
		t.Helper()
		id := newTicketID()
		if err := issueTicket(state, id, ticket{Session: "s", Agent: "default", HookID: "h1", Command: commandDigest(command), Expires: expires}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	good := issue("ls", now.Add(time.Minute))
	if fi, err := os.Stat(filepath.Join(ticketsDir(state), good+".json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the ticket's file: %v %v", fi, err)
	}
	if err := issueTicket(state, good, ticket{}); err == nil {
		t.Error("an id issued twice")
	}
	tk, err := takeTicket(state, good, "ls", now)
	if err != nil || tk.Session != "s" || tk.HookID != "h1" || tk.Agent != "default" {
		t.Fatalf("take: %+v %v", tk, err)
	}
	other := issue("ls", now.Add(time.Minute))
	old := issue("ls", now.Add(-time.Second))
	spent := issue("ls", now.Add(time.Minute))
	spendTicket(state, spent)
	for _, c := range []struct {
		name, id, command, why string
	}{
		{"taken already", good, "ls", "spent"},
		{"another command", other, "rm -rf .", "another command"},
		{"the same id after a wrong try", other, "ls", "spent"},
		{"expired", old, "ls", "expired"},
		{"voided unused", spent, "ls", "spent"},
		{"not an id", "../../etc/passwd", "ls", "not one the hook issues"},
		{"a short id", "abc", "ls", "not one the hook issues"},
		{"never issued", newTicketID(), "ls", "unknown"},
	} {
		_, err := takeTicket(state, c.id, c.command, now)
		if !errors.Is(err, ErrTicket) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want an ErrTicket saying %q", c.name, err, c.why)
		}
	}
	if ents, _ := os.ReadDir(ticketsDir(state)); len(ents) != 0 {
		t.Errorf("left in the tickets' folder: %v", ents)
	}
}

// TestTicketTakenOnce: of many runs presenting one id at once, one gets it.
func TestTicketTakenOnce(t *testing.T) {
	state := t.TempDir()
	id := newTicketID()
	if err := issueTicket(state, id, ticket{Command: commandDigest("x"), Expires: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := takeTicket(state, id, "x", time.Now()); err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d takers got the id, want 1", won)
	}
}
