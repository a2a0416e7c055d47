package sandbox

import (
	"cmp"
	"slices"
	"strings"
)

// Mask returns s with every occurrence of a secret's value replaced by
// "***NAME***". Longer values are replaced first, so a secret that contains
// another is masked whole. Empty values are ignored. The audit log uses it
// too, so a secret is masked the same way wherever it would appear.
func Mask(s string, secrets []Secret) string {
	r := maskReplacer(secrets)
	if r == nil {
		return s
	}
	return r.Replace(s)
}

func maskReplacer(secrets []Secret) *strings.Replacer {
	vals := make([]Secret, 0, len(secrets))
	for _, sec := range secrets {
		if sec.Value != "" {
			vals = append(vals, sec)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	// strings.Replacer tries the old strings in argument order at each
	// position, so the longest value must come first.
	slices.SortStableFunc(vals, func(a, b Secret) int { return cmp.Compare(len(b.Value), len(a.Value)) })
	pairs := make([]string, 0, 2*len(vals))
	for _, sec := range vals {
		pairs = append(pairs, sec.Value, "***"+sec.Name+"***")
	}
	return strings.NewReplacer(pairs...)
}

// maxSecretLen is the length of the longest secret value.
func maxSecretLen(secrets []Secret) int {
	n := 0
	for _, s := range secrets {
		n = max(n, len(s.Value))
	}
	return n
}
