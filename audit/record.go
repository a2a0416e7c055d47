package audit

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Effect is one planned effect of a call: what it does to which path, and
// the zone that path is in.
type Effect struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	Zone string `json:"zone"`
	// Covers is, on a folder's effect (a path ending "/**": moved,
	// deleted, its mode changed), how many paths inside it the rules
	// judged one by one; the line keeps the folder's effect alone.
	Covers int `json:"covers,omitempty"`
}

// RealEffect is one change a bash call made on its overlay, judged after
// the command ended: what it did to which path, and the file before and
// after. Unpredicted marks a change the analysis did not foresee (a
// program's own writes); Refused, one the rules refused (then nothing of
// the call was applied).
type RealEffect struct {
	Op          string     `json:"op"`
	Path        string     `json:"path"`
	Zone        string     `json:"zone"`
	From        string     `json:"from,omitempty"` // a move-in's or a link's source
	Before      *FileState `json:"before,omitempty"`
	After       *FileState `json:"after,omitempty"`
	Unpredicted bool       `json:"unpredicted,omitempty"`
	Refused     bool       `json:"refused,omitempty"` // a folder's: it, or a path inside it
	Covers      int        `json:"covers,omitempty"`  // as Effect's
}

// FileState is what the log keeps of one side of a real change: the
// file's mode, size and the sha256 of its content (empty for a folder or
// a symlink), never the content.
type FileState struct {
	Mode   string `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
}

// Record is one audit line. Writer.Write fills Seq and Prev (and ID and Time
// when they are empty); the JSON field names are the log's contract.
type Record struct {
	Time time.Time `json:"time"`
	ID   string    `json:"id"` // unique per call
	// Vault is the id of the vault the call was made in (package
	// vaultid); absent from lines before vaults were named, which verify
	// unchanged.
	Vault   string `json:"vault,omitempty"`
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Via     Via    `json:"via"`
	// Run is the id of the `vaultgate run` whose agent made the call;
	// absent from other lines and from lines before it.
	Run   string `json:"run,omitempty"`
	Event string `json:"event,omitempty"` // "" the call; EventAfter: the hook's line after Claude Code ran it
	// ToolUseID is Claude Code's id of a call the hook judged: it joins
	// the call's PreToolUse and PostToolUse lines, and both to Claude
	// Code's transcript. Absent from other lines and from lines before it.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Continues is, on vaultgate exec's line, the id of the hook's line
	// whose Bash it runs: the two are one call of the agent's (see
	// Joiner). Absent from other lines and from lines before it, which
	// verify unchanged.
	Continues string         `json:"continues,omitempty"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args"` // already redacted by the caller
	Effects   []Effect       `json:"effects"`
	// Real is what a bash call on the overlay really changed, beside the
	// Effects its analysis predicted; absent from other lines and from
	// lines before it, which verify unchanged.
	Real       []RealEffect `json:"real,omitempty"`
	Decision   Decision     `json:"decision"`
	Rule       string       `json:"rule,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	Outcome    Outcome      `json:"outcome,omitempty"` // "" for a call that did not run
	Error      string       `json:"error,omitempty"`
	DurationMS float64      `json:"duration_ms"`
	ExitCode   *int         `json:"exit_code,omitempty"`
	// TimedOut and Signal say why a bash call ended, when not by itself:
	// its timeout, or a signal that killed bash (then ExitCode is 128+N).
	TimedOut bool `json:"timed_out,omitempty"`
	Signal   int  `json:"signal,omitempty"`
	// Stdout and Stderr are the head of a bash call's output, at most
	// OutputExcerpt bytes each, masked as every line is; absent from other
	// lines and from lines before them, which verify unchanged.
	Stdout string   `json:"stdout,omitempty"`
	Stderr string   `json:"stderr,omitempty"`
	Wall   []string `json:"wall,omitempty"`
	Seq    int64    `json:"seq"`  // line number in the chain, 1-based, across rotations
	Prev   string   `json:"prev"` // hex sha256 of the previous line without its newline; "" for the first
}

// OutputExcerpt is how much of each of a bash call's streams a line
// keeps: enough to see why a command failed, not a copy of what it read.
const OutputExcerpt = 1024

// Excerpt is the head of s that a line keeps: at most OutputExcerpt bytes,
// cut at a character's start, with the number of bytes left out.
func Excerpt(s string) string {
	if len(s) <= OutputExcerpt {
		return s
	}
	cut := OutputExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… %d more bytes", len(s)-cut)
}

// Failed reports whether the call was allowed and then failed: a run
// that returned an error, a command that exited non-zero, changes that
// were not applied.
func (r *Record) Failed() bool {
	return r.Decision == "allow" && (r.Outcome == "failed" || r.Error != "")
}

// FailedWhy says in a few words why an allowed call failed, "" when it did
// not: the error, then how a command ended (its timeout, a signal, its
// exit code). The words are English: the log's error text is already in
// the agent's language.
func (r *Record) FailedWhy() string {
	if !r.Failed() {
		return ""
	}
	var parts []string
	switch {
	case r.TimedOut:
		parts = append(parts, "timed out")
	case r.Signal != 0:
		parts = append(parts, fmt.Sprintf("killed by signal %d", r.Signal))
	}
	if r.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit code %d", *r.ExitCode))
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	if len(parts) == 0 {
		return "failed"
	}
	return strings.Join(parts, ", ")
}

// Command is a bash call's command line, "" for any other call: the
// vault's bash tool and the hook's Bash alike.
func (r *Record) Command() string {
	if !strings.EqualFold(r.Tool, "bash") {
		return ""
	}
	c, _ := r.Args["command"].(string)
	return c
}

// EventAfter marks the line a hook writes after Claude Code has run a
// tool (PostToolUse): what vaultgate recorded of it, not a decision to let
// it run. Lines without an event (all before it) are the call itself.
const EventAfter = "after"

// NewID returns a fresh call id: a UUID version 7, so ids sort by time and
// still carry 74 random bits.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		panic("audit: crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// Body is what the log holds in place of a file body or an edit string: its
// length in bytes and its sha256, enough to tell two versions apart and
// nothing of what they say.
func Body(s string) map[string]any {
	sum := sha256.Sum256([]byte(s))
	return map[string]any{"bytes": len(s), "sha256": hex.EncodeToString(sum[:])}
}

// lineHash is the chain's hash of one line, given without its newline.
func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}
