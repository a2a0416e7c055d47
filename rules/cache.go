package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"

	"cel.dev/cel-go/cel"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// The hook is a new process for every tool call, and parsing is most of
// what compiling a rule costs there (CEL's ANTLR parser starts cold in
// each process). So the hook keeps the rules' parsed trees in the state
// folder, keyed by a hash of the rules' text and of the CEL version that
// parsed them, and parses again on any miss, mismatch or damage. Only the
// parse is kept: every process type-checks the trees against the
// variables it declares, so a misspelt name still fails closed, and a
// rule whose check fails is parsed and checked again from its text, so
// that its error is the text's own.

// cacheFormat changes when the file's layout does.
const cacheFormat = "vaultgate-rules-parsed-1"

// cachePrefix names the cache files in the state folder.
const cachePrefix = "rules-parsed-"

// cacheTTL is how long an unused cache file of older rules is kept.
const cacheTTL = 7 * 24 * time.Hour

// celVersion is the CEL modules this binary was built with, "" when the
// build does not say (then nothing is cached).
var celVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, m := range bi.Deps {
		if m.Path == "cel.dev/cel-go" || m.Path == "cel.dev/expr" || m.Path == "github.com/antlr4-go/antlr/v4" {
			if m.Replace != nil {
				m = m.Replace
			}
			b.WriteString(m.Path + "@" + m.Version + "+" + m.Sum + "\n")
		}
	}
	return b.String()
})

// parseCache is the parsed trees of one agent's rules, read from and
// written to one file of the state folder.
type parseCache struct {
	file   string
	trees  []*cel.Ast // by rule, nil where none was read
	loaded bool       // the file held a tree for every rule
}

// cacheKey is the hash of what the parsed trees depend on.
func cacheKey(decl []config.DenyRule) string {
	v := celVersion()
	if v == "" {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(cacheFormat + "\n" + v))
	for _, d := range decl {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(d.When)))
		h.Write(n[:])
		h.Write([]byte(d.When))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// openParseCache reads the cache of decl in dir; a file that is missing,
// of other rules, or damaged in any way gives no trees (and is rewritten
// once they are parsed).
func openParseCache(dir string, decl []config.DenyRule) *parseCache {
	key := cacheKey(decl)
	if dir == "" || key == "" {
		return nil
	}
	c := &parseCache{file: filepath.Join(dir, cachePrefix+key[:32]), trees: make([]*cel.Ast, len(decl))}
	data, err := os.ReadFile(c.file)
	if err != nil {
		return c
	}
	head := []byte(key + "\n")
	if !bytes.HasPrefix(data, head) {
		return c
	}
	data = data[len(head):]
	trees := make([]*cel.Ast, len(decl))
	for i := range trees {
		if len(data) < 4 {
			return c
		}
		n := int(binary.LittleEndian.Uint32(data))
		if n > len(data)-4 {
			return c
		}
		var pe exprpb.ParsedExpr
		if err := proto.Unmarshal(data[4:4+n], &pe); err != nil || pe.GetExpr() == nil {
			return c
		}
		trees[i] = cel.ParsedExprToAst(&pe)
		data = data[4+n:]
	}
	if len(data) != 0 {
		return c
	}
	c.trees, c.loaded = trees, true
	return c
}

// tree is rule i's kept parse, if any.
func (c *parseCache) tree(i int) *cel.Ast {
	if c == nil || i >= len(c.trees) {
		return nil
	}
	return c.trees[i]
}

// keep records rule i's parse, to be written by save.
func (c *parseCache) keep(i int, ast *cel.Ast) {
	if c != nil && i < len(c.trees) {
		if c.trees[i] != ast {
			c.loaded = false // a tree was parsed afresh: write the file again
		}
		c.trees[i] = ast
	}
}

// save writes the trees when the file did not hold them all: to a
// temporary file renamed into place, so a reader sees a whole file or
// none. A cache that can't be written is only slower, never wrong.
func (c *parseCache) save(key string) {
	if c == nil || c.loaded {
		return
	}
	buf := []byte(key + "\n")
	for _, t := range c.trees {
		if t == nil {
			return
		}
		pe, err := cel.AstToParsedExpr(t)
		if err != nil {
			return
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(pe)
		if err != nil {
			return
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	dir := filepath.Dir(c.file)
	tmp, err := os.CreateTemp(dir, cachePrefix+"tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(buf)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), c.file) != nil {
		os.Remove(tmp.Name())
		return
	}
	// The files of rules since changed are removed once unused a while.
	old, _ := filepath.Glob(filepath.Join(dir, cachePrefix+"*"))
	for _, name := range old {
		if fi, err := os.Stat(name); err == nil && name != c.file && time.Since(fi.ModTime()) > cacheTTL {
			os.Remove(name)
		}
	}
}

// CachedChain is Chain keeping the rules' parsed trees in stateDir
// between processes (the hook's): the same rules, checked, planned and
// with their examples run exactly as Chain does, and so the same
// decisions; only the parse of an unchanged rule's text is reused.
func CachedChain(stateDir string) func(decl []config.DenyRule, command func(*policy.Effect) string,
	plan func(*config.Example) (*policy.ToolCall, error)) ([]policy.Rule, error) {
	return func(decl []config.DenyRule, command func(*policy.Effect) string,
		plan func(*config.Example) (*policy.ToolCall, error)) ([]policy.Rule, error) {
		c := openParseCache(stateDir, decl)
		set, err := compileSet(decl, Options{Command: command}, c)
		if err != nil {
			return nil, err
		}
		if c != nil {
			c.save(cacheKey(decl))
		}
		for _, r := range set.Rules {
			if err := r.CheckExamples(plan); err != nil {
				return nil, err
			}
		}
		return []policy.Rule{set.Policy()}, nil
	}
}
