package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestHTTPOrigins(t *testing.T) {
	// What each origin the config lists comes to: one spelling per origin.
	good := map[string]string{
		"http://localhost:6274":          "http://localhost:6274",
		"http://localhost":               "http://localhost:80",
		"https://notes.example":          "https://notes.example:443",
		"HTTPS://Notes.Example:8443":     "https://notes.example:8443",
		"http://127.0.0.1:8080":          "http://127.0.0.1:8080",
		"http://[::1]:6274":              "http://[::1]:6274",
		"http://[0:0:0:0:0:0:0:1]":       "http://[::1]:80",
		"http://[2001:DB8::1]:443":       "http://[2001:db8::1]:443",
		"http://xn--e1afmkfd.xn--p1ai:1": "http://xn--e1afmkfd.xn--p1ai:1",
	}
	for in, want := range good {
		c, err := Load(writeConfig(t, fmt.Sprintf("vault = \"vault\"\n[http]\norigins = [%q]\n", in)))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if len(c.HTTP.Origins) != 1 || c.HTTP.Origins[0].String() != want {
			t.Errorf("%s: %v, want %s", in, c.HTTP.Origins, want)
		}
	}

	// None listed: none but the server's own.
	c, err := Load(writeConfig(t, "vault = \"vault\"\n"))
	if err != nil || len(c.HTTP.Origins) != 0 {
		t.Errorf("no [http] origins: %v %v", c.HTTP.Origins, err)
	}
	// Several, in order.
	c, err = Load(writeConfig(t, "vault = \"vault\"\n[http]\norigins = [\"http://localhost:6274\", \"https://a.example\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []Origin{{"http", "localhost", 6274}, {"https", "a.example", 443}}; !slices.Equal(c.HTTP.Origins, got) {
		t.Errorf("two origins: %v", c.HTTP.Origins)
	}

	bad := map[string]string{
		"null":                        "opaque",
		"localhost:6274":              "scheme://host",
		"//localhost:6274":            "scheme://host",
		"://localhost:6274":           "scheme must be",
		"ftp://localhost":             "scheme must be",
		"ws://localhost:6274":         "scheme must be",
		"http://":                     "no host",
		"http://:6274":                "no host",
		"http://localhost:6274/":      "no path",
		"http://localhost/mcp":        "no path",
		"http://localhost?x=1":        "no path",
		"http://localhost#top":        "no path",
		"http://localhost:":           "no port",
		"http://localhost:0":          "1 to 65535",
		"http://localhost:65536":      "1 to 65535",
		"http://localhost:+80":        "1 to 65535",
		"http://localhost:http":       "1 to 65535",
		"http://me@localhost":         "not a host name",
		"http://*.example":            "not a host name",
		"http://пример.рф":            "punycode",
		"http://::1:6274":             "in brackets",
		"http://[::1":                 "closing ]",
		"http://[127.0.0.1]":          "not an IPv6",
		"http://[fe80::1%25eth0]:80":  "not an IPv6",
		"http://[::1]6274":            "want :port",
		"http://local host":           "not a host name",
		"":                            "scheme://host",
		"http://localhost:6274 ":      "1 to 65535",
		"https://notes.example:443\n": "1 to 65535",
	}
	for in, text := range bad {
		body := fmt.Sprintf("vault = \"vault\"\n[http]\norigins = [\"http://localhost:6274\", %q]\n", in)
		_, err := Load(writeConfig(t, body))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want *config.Error", in, err)
			continue
		}
		if ce.Key != "http.origins[1]" || !strings.Contains(err.Error(), text) {
			t.Errorf("%q: key %q, %q; want key http.origins[1] and %q", in, ce.Key, err, text)
		}
	}

	// The list is the server's, not an agent's.
	_, err = Load(writeConfig(t, "vault = \"vault\"\n[agents.bot]\ntoken_env = \"T\"\norigins = [\"http://localhost:6274\"]\n"))
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "agents.bot.origins" || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("an agent's origins: %v", err)
	}
	_, err = Load(writeConfig(t, "vault = \"vault\"\n[http]\norigins = \"http://localhost:6274\"\n"))
	if err == nil {
		t.Errorf("origins as a string, not a list: no error")
	}
}

// FuzzParseOrigin: whatever ParseOrigin accepts, its String reads back as
// the same origin, so an origin has one spelling whichever way it came.
func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:6274", "HTTPS://A.example", "http://[::1]", "http://[0::1]:80", "null", "http://a:b:c", "http://x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOrigin(s)
		if err != nil {
			return
		}
		back, err := ParseOrigin(o.String())
		if err != nil || back != o {
			t.Fatalf("%q → %v → %v, %v", s, o, back, err)
		}
		if o.Port < 1 || o.Port > 65535 || (o.Scheme != "http" && o.Scheme != "https") || o.Host == "" {
			t.Fatalf("%q → %+v", s, o)
		}
	})
}

func TestHTTPMaxBody(t *testing.T) {
	for body, want := range map[string]int64{
		"vault = \"vault\"\n":                              DefaultMaxBody,
		"vault = \"vault\"\n[http]\nmax_body = \"8MiB\"\n": 8 << 20,
		"vault = \"vault\"\n[http]\nmax_body = 4096\n":     4096,
	} {
		c, err := Load(writeConfig(t, body))
		if err != nil || c.HTTP.MaxBody != want {
			t.Errorf("%q: %v %v, want %d", body, c, err, want)
		}
	}
	if DefaultMaxBody != 16<<20 {
		t.Errorf("default %d", DefaultMaxBody)
	}
	for body, want := range map[string]string{
		"[http]\nmax_body = 0\n":        "http.max_body: must be more than 0",
		"[http]\nmax_body = \"0MiB\"\n": "http.max_body: must be more than 0",
		"[http]\nmax_body = -1\n":       "http.max_body: must be more than 0",
		"[http]\nmax_body = \"lots\"\n": "bad size",
	} {
		_, err := Load(writeConfig(t, "vault = \"vault\"\n"+body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
