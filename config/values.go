package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// duration is a TOML string such as "2m".
type duration time.Duration

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (write e.g. \"90s\" or \"2m\")", b)
	}
	*d = duration(v)
	return nil
}

// size is a TOML string such as "100MiB", or a plain number of bytes.
type size int64

func (s *size) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		*s = size(v)
		return nil
	case string:
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		*s = size(n)
		return nil
	}
	return fmt.Errorf("bad size %v (write e.g. \"100MiB\")", v)
}

func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsDigit(r) })
	if i == 0 {
		return 0, fmt.Errorf("bad size %q (write e.g. \"100MiB\")", v)
	}
	num, unit := t, ""
	if i > 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: %v", v, err)
	}
	mult := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("bad size %q: unknown unit %q (B, KB, MB, GB, KiB, MiB, GiB)", v, unit)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q: too large", v)
	}
	return n * mult, nil
}

// caseSensitivity is "auto", true or false.
type caseSensitivity struct {
	auto  bool
	value bool
}

func (c *caseSensitivity) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case bool:
		*c = caseSensitivity{value: v}
		return nil
	case string:
		if v == "auto" {
			*c = caseSensitivity{auto: true}
			return nil
		}
	}
	return fmt.Errorf("%v: must be \"auto\", true or false", v)
}

// probeFolding reports whether the file system under vault folds case. It
// looks up an existing name at the root under another case; only an empty
// (or letterless) root gets a probe file, removed at once.
func probeFolding(vault string) (bool, error) {
	ents, err := os.ReadDir(vault)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		name := e.Name()
		other := swapCase(name)
		if other == name {
			continue
		}
		return sameFile(filepath.Join(vault, name), filepath.Join(vault, other)), nil
	}
	f, err := os.CreateTemp(vault, ".vaultgate-case-probe-")
	if err != nil {
		return false, err
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	return sameFile(name, filepath.Join(filepath.Dir(name), swapCase(filepath.Base(name)))), nil
}

func sameFile(a, b string) bool {
	sa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	sb, err := os.Lstat(b)
	if err != nil {
		return false
	}
	return os.SameFile(sa, sb)
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}
