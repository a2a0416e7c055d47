package vaultgen

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// obsidianFiles are the .obsidian folder of a vault with two community
// plugins and a theme.
var obsidianFiles = map[string]string{
	"app.json":                           `{"alwaysUpdateLinks":true,"newFileLocation":"folder","newFileFolderPath":"Inbox","attachmentFolderPath":"attachments"}`,
	"appearance.json":                    `{"baseFontSize":16,"cssTheme":"Minimal"}`,
	"core-plugins.json":                  `["file-explorer","global-search","switcher","graph","backlink","outgoing-link","tag-pane","daily-notes","templates","page-preview"]`,
	"community-plugins.json":             `["dataview","obsidian-git"]`,
	"daily-notes.json":                   `{"folder":"Daily","format":"YYYY-MM-DD","template":"Templates/Daily"}`,
	"hotkeys.json":                       `{}`,
	"graph.json":                         `{"collapse-filter":true,"search":"","showTags":false,"showAttachments":false}`,
	"workspace.json":                     `{"main":{"id":"a1","type":"split","children":[]},"active":"a1","lastOpenFiles":["Inbox/Plan.md"]}`,
	"plugins/dataview/manifest.json":     `{"id":"dataview","name":"Dataview","version":"0.5.67"}`,
	"plugins/dataview/data.json":         `{"renderNullAs":"\\-","enableDataviewJs":false}`,
	"plugins/obsidian-git/manifest.json": `{"id":"obsidian-git","name":"Git","version":"2.27.0"}`,
	"plugins/obsidian-git/data.json":     `{"autoSaveInterval":10,"autoPullOnBoot":true}`,
	"themes/Minimal/manifest.json":       `{"name":"Minimal","version":"7.7.7"}`,
}

// writeObsidian writes .obsidian at the vault's root, its plugins' code
// the size such code is.
func writeObsidian(dir string) error {
	files := map[string]string{
		"plugins/dataview/main.js":     strings.Repeat("var e=function(t){return t&&t.__esModule?t:{default:t}};\n", 20000),
		"plugins/obsidian-git/main.js": strings.Repeat("\"use strict\";var n=Object.defineProperty;\n", 15000),
		"themes/Minimal/theme.css":     strings.Repeat("body{--font-text-size:16px;--line-width:40rem}\n", 4000),
	}
	for name, body := range obsidianFiles {
		files[name] = body + "\n"
	}
	for name, body := range files {
		p := filepath.Join(dir, ".obsidian", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeGit writes a .git folder as git lays one out — HEAD, config, refs,
// an index and loose objects — its contents noise: nothing reads them as
// a repository, the wall only has to find the folder.
func writeGit(gitDir string, rng *rand.Rand) error {
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	hash := func() string { return hex.EncodeToString(noise(20)) }
	head := hash()
	files := map[string][]byte{
		"HEAD":            []byte("ref: refs/heads/main\n"),
		"config":          []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"),
		"description":     []byte("Unnamed repository; edit this file 'description' to name the repository.\n"),
		"refs/heads/main": []byte(head + "\n"),
		"logs/HEAD":       fmt.Appendf(nil, "%s %s A Person <a@example.org> 1700000000 +0000\tcommit (initial): start\n", strings.Repeat("0", 40), head),
		"index":           noise(2<<10 + rng.IntN(16<<10)),
	}
	for range 8 + rng.IntN(24) {
		h := hash()
		files["objects/"+h[:2]+"/"+h[2:]] = noise(100 + rng.IntN(2000))
	}
	for _, empty := range []string{"objects/info", "objects/pack", "refs/tags", "hooks"} {
		if err := os.MkdirAll(filepath.Join(gitDir, empty), 0o755); err != nil {
			return err
		}
	}
	for name, body := range files {
		p := filepath.Join(gitDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return err
		}
	}
	return nil
}
