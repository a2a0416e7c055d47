package tools

import (
	"archive/tar"
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// soundVault is the corpus vault served with wall = "off", where the
// analysis is the only guard, plus what the attacks below need: a secret
// in the hidden zone, a folder in it a link can lead to, the audit log
// beside the vault, archives whose member o/app.json lands where the link
// мета/бобер/o leads, files whose names are options, and a list of files.
func soundVault(t *testing.T) (s *Set, root, base string) {
	t.Helper()
	s, root, _ = corpusTxnVault(t)
	s.Bash.Wall = config.WallOff
	base = filepath.Dir(root)
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hidden/h.md", "SECRET\n")
	write("hidden/sub/k.md", "SECRET\n")
	write("../audit.jsonl", "{}\n")
	write("мета/бобер/--target-directory=..", "x\n")
	write("мета/бобер/--checkpoint=1", "x\n")
	write("мета/бобер/--checkpoint-action=exec=sh s.sh", "x\n")
	write("мета/бобер/s.sh", "echo owned > ../план.md\n")
	write("write/list", "hidden/h.md\x00")

	zf, err := os.Create(filepath.Join(root, "write/x.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	w, _ := zw.Create("o/app.json")
	w.Write([]byte("owned\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zf.Close()
	tf, err := os.Create(filepath.Join(root, "write/x.tar"))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(tf)
	tw.WriteHeader(&tar.Header{Name: "o/app.json", Mode: 0o644, Size: 6, Typeflag: tar.TypeReg})
	tw.Write([]byte("owned\n"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tf.Close()
	return s, root, base
}

// guarded is what no allowed bash call may change in the sound vault:
// the protected and hidden zones, the audit log and what lies outside.
func guarded(rel string) bool {
	switch {
	case strings.HasPrefix(rel, "мета/бобер/") || rel == "мета/бобер":
		return false // a write zone inside the protected one
	case rel == "мета" || strings.HasPrefix(rel, "мета/"),
		rel == ".obsidian" || strings.HasPrefix(rel, ".obsidian/"),
		rel == "hidden" || strings.HasPrefix(rel, "hidden/"):
		return true
	}
	return false
}

// TestBashSoundAlone runs the attacks as the bash tool runs them
// with wall = "off": each must be refused by the analysis and the rules
// alone, and nothing protected, hidden, outside or in the audit log may
// change, nor may the hidden secret reach the output or another file.
func TestBashSoundAlone(t *testing.T) {
	for _, cmd := range []string{
		"ln -s ../мета/бобер notes/m; echo x > notes/m/../план.md",
		"ln -s ../мета/бобер notes/m; cp README.md notes/m/../план.md",
		"ln -s ../мета/бобер notes/m; tee notes/m/../план.md < README.md",
		"ln -s ../мета/бобер notes/m; touch notes/m/../план.md",
		"ln -s ../мета/бобер notes/m; rm notes/m/../план.md",
		"ln -s ../мета/бобер notes/m; cd -P notes/m/.. && echo x > план.md",
		"ln -s ../мета/бобер notes/m; cd notes/m && echo x > ../план.md",
		"ln -s ../hidden/sub notes/h; cat notes/h/../h.md",
		"ln -s ../hidden/sub notes/h; tar -cf write/y.tar notes/h/../h.md",
		"echo x >> notes/up/../../audit.jsonl",
		"unzip -o write/x.zip -d мета/бобер",
		"tar -xf write/x.tar -C мета/бобер",
		"cd мета/бобер && cp * ../../notes/",
		"cd мета/бобер && tar -cf ../../write/x2.tar *",
		"sort --files0-from=write/list",
		"tar -cf write/y.tar -T write/list",
		"wc --files0-from=write/list",
		"sha256sum -c write/list",
		"du -X write/list notes",
	} {
		t.Run(cmd, func(t *testing.T) {
			s, root, base := soundVault(t)
			before, around := tree(t, root), tree(t, base)
			o := runBash(t, s, cmd, 0)
			if o.deny == nil {
				t.Errorf("allowed (effects %v)", o.plan.Effects)
			}
			after := tree(t, root)
			for _, p := range changed(before, after) {
				if guarded(p) {
					t.Errorf("changed %s", p)
				}
			}
			for _, p := range changed(around, tree(t, base)) {
				if !strings.HasPrefix(p, "vault/") {
					t.Errorf("changed %s beside the vault", p)
				}
			}
			if o.res != nil {
				if out, _ := o.res.Structured.(BashOutput); strings.Contains(out.Stdout+out.Stderr, "SECRET") {
					t.Errorf("the hidden secret reached the output")
				}
			}
			for p, v := range after {
				if !guarded(p) && v != before[p] && strings.HasSuffix(p, ".tar") {
					if b, _ := os.ReadFile(filepath.Join(root, p)); strings.Contains(string(b), "SECRET") {
						t.Errorf("the hidden secret reached %s", p)
					}
				}
			}
		})
	}
}

// TestBashMachineRefused judges, without running them, commands that
// change the machine: with wall = "off" each is refused as exec.
func TestBashMachineRefused(t *testing.T) {
	s, _, _ := soundVault(t)
	for _, cmd := range []string{"hostname evil", "date -s 2020-01-01", "date 010100002020", "sysctl -w kernel.hostname=x",
		"ip link set lo down", "mount --bind notes мета", "env hostnamectl set-hostname x"} {
		p, err := s.Plan("bash", map[string]any{"command": cmd})
		if err != nil {
			t.Fatal(err)
		}
		c := &policy.ToolCall{Tool: "bash", Effects: p.Effects, Zones: s.Zones, Lang: "en", TellAll: p.TellAll, Facts: p.Facts}
		d := txnChain(s.Bash).Judge(c)
		if d == nil || !strings.Contains(d.Reason, "changes the machine") {
			t.Errorf("%s: %v, want refused as changing the machine", cmd, d)
		}
	}
}
