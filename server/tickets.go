package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A Claude Code Bash is judged by the hook and run by vaultgate exec, two
// processes. So that the run is the judged call's continuation — the same
// agent, the same Claude Code session (its reads and counters), and an
// audit line that names the hook's — the hook issues a call id for each
// Bash it allows and writes it into the rewritten command; exec presents
// it. The id is a secret of 128 random bits that only opens the call it
// was issued for: it is bound to the command's bytes, taken
// (and so spent) by the first exec that presents it, and void after
// ticketTTL. A ticket lives in the state folder, which the wall hides.

// ticketTTL is how long an issued call id waits for its exec. Claude Code
// runs a Bash right after its PreToolUse hook allowed it.
const ticketTTL = 5 * time.Minute

// ticket is what an issued call id stands for.
type ticket struct {
	Session string    `json:"session"`
	Agent   string    `json:"agent"`
	HookID  string    `json:"hook_id"` // the hook line's id
	Command string    `json:"command_sha256"`
	Expires time.Time `json:"expires"`
}

// ErrTicket is a call id exec can't continue: unknown, spent, expired, or
// issued for another command or agent.
var ErrTicket = errors.New("call id")

func ticketsDir(stateDir string) string { return filepath.Join(stateDir, "calls") }

// newTicketID is a fresh call id: 32 hex digits.
func newTicketID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on a supported system
	}
	return hex.EncodeToString(b[:])
}

// validTicketID is whether id has the form newTicketID gives, and so can
// name a file in the tickets' folder and nothing else.
func validTicketID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func commandDigest(command string) string {
	sum := sha256.Sum256([]byte(command))
	return hex.EncodeToString(sum[:])
}

// issueTicket keeps t under id, which must be new.
func issueTicket(stateDir, id string, t ticket) error {
	dir := ticketsDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("call ids' folder: %w", err)
	}
	cleanOldTickets(dir)
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, id+".json"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("issuing a call id: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("issuing a call id: %w", errors.Join(werr, cerr))
	}
	return nil
}

// takeTicket spends call id for command: only one taker gets it (a
// rename is atomic), whatever it comes to. Where the command runs from is
// not bound: exec judges the command again from there.
func takeTicket(stateDir, id, command string, now time.Time) (ticket, error) {
	if !validTicketID(id) {
		return ticket{}, fmt.Errorf("%w %q: not one the hook issues", ErrTicket, id)
	}
	dir := ticketsDir(stateDir)
	name := filepath.Join(dir, id+".json")
	taken := filepath.Join(dir, id+".taken-"+strconv.Itoa(os.Getpid()))
	if err := os.Rename(name, taken); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ticket{}, fmt.Errorf("%w %s: unknown, or spent by an earlier run", ErrTicket, id)
		}
		return ticket{}, fmt.Errorf("%w %s: %v", ErrTicket, id, err)
	}
	data, err := os.ReadFile(taken)
	os.Remove(taken)
	if err != nil {
		return ticket{}, fmt.Errorf("%w %s: %v", ErrTicket, id, err)
	}
	var t ticket
	if err := json.Unmarshal(data, &t); err != nil {
		return ticket{}, fmt.Errorf("%w %s: unreadable: %v", ErrTicket, id, err)
	}
	switch {
	case now.After(t.Expires):
		return ticket{}, fmt.Errorf("%w %s: expired at %s", ErrTicket, id, t.Expires.Format(time.RFC3339))
	case t.Command != commandDigest(command):
		return ticket{}, fmt.Errorf("%w %s: issued for another command", ErrTicket, id)
	}
	return t, nil
}

// cleanOldTickets removes call ids past their time (a Bash allowed and
// never run), a bounded number at a time.
func cleanOldTickets(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-2 * ticketTTL)
	for i, e := range ents {
		if i > 1000 {
			return
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// spendTicket voids call id unused: the call it was issued for was not
// allowed.
func spendTicket(stateDir, id string) {
	os.Remove(filepath.Join(ticketsDir(stateDir), id+".json"))
}
