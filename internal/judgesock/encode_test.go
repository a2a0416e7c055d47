package judgesock

import (
	"bytes"
	"encoding/json"
	"testing"
)

// requests are requests of every shape: a hook's, exec's, fields empty
// and set, strings that need escaping and strings of invalid UTF-8.
var requests = []Request{
	{},
	{Config: "/c.toml", Digest: "d", Agent: "default", Exec: "/bin/vaultgate", Env: map[string]string{}},
	{Config: "/в/c.toml", Agent: "a", ExecProblem: "no <vaultgate> & \"x\"", Env: map[string]string{"HOME": "/root", "CLAUDE_PROJECT_DIR": "/p\n\t\x01", "": "\u2028\u2029"}},
	{Config: "/c.toml", Run: &ExecCall{Cwd: "/v", Command: "true"}},
	{Config: "/c.toml", Run: &ExecCall{CallID: "0123", Label: "l", Cwd: "/v/💬 чаты", Command: "echo 'a\\b' \"\x7f\" <&> \b\f\r", Timeout: 120, Environ: []string{"A=1", "B=\xff\xfe", "C=\xe2\x80", ""}}},
	{Run: &ExecCall{Environ: []string{}}},
	{Run: &ExecCall{Timeout: -3}},
}

// TestAppendJSONIsMarshal: the request is written byte for byte as
// json.Marshal writes it.
func TestAppendJSONIsMarshal(t *testing.T) {
	for _, r := range requests {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.appendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("appendJSON:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, r := range requests {
		if r.Run != nil && len(r.Run.Environ) > 0 {
			f.Add(r.Config, r.Run.Command, r.Run.Environ[0], r.Run.Environ[len(r.Run.Environ)-1], r.Run.Timeout)
		}
	}
	f.Add("<>&", "\u2028", "\xff", "\x00\x1f", 0)
	f.Fuzz(func(t *testing.T, a, b, c, d string, n int) {
		for _, r := range []Request{
			{Config: a, Digest: b, Agent: c, Exec: d, ExecProblem: a, Env: map[string]string{a: b, c: d}},
			{Config: d, Run: &ExecCall{CallID: a, Label: b, Cwd: c, Command: d, Timeout: n, Environ: []string{a, b, c, d}}},
		} {
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.appendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("appendJSON:\n%q\njson.Marshal:\n%q", got, want)
			}
		}
	})
}
