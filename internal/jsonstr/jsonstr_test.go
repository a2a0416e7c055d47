package jsonstr

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
)

// slogString is how log/slog's JSON handler writes s as a value.
func slogString(s string) string {
	var b bytes.Buffer
	h := slog.NewJSONHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey {
			return slog.Attr{}
		}
		return a
	}})
	slog.New(h).Info("", "v", s)
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(bytes.TrimSuffix(bytes.TrimPrefix(out, []byte(`{"v":`)), []byte("}")))
}

func check(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := Append(nil, s, AsMarshal); !bytes.Equal(got, want) {
		t.Errorf("AsMarshal %q: %s, json.Marshal: %s", s, got, want)
	}
	if got, want := string(Append(nil, s, AsSlog)), slogString(s); got != want {
		t.Errorf("AsSlog %q: %s, slog: %s", s, got, want)
	}
}

func TestLikeTheReferences(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\`, "\b\f\n\r\t\x00\x1f\x7f", "<a>&", "\u2028\u2029", "\xff\xfe", "заметки 📚", "a\xc3"} {
		check(t, s)
	}
}

func FuzzLikeTheReferences(f *testing.F) {
	f.Add("<x>\u2028\xff\b")
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}
