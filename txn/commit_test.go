package txn_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultgate/vaultgate/txn"
)

// TestCommitAppliesEveryKind applies one change of each kind and checks
// the vault byte by byte, with modes and owners.
func TestCommitAppliesEveryKind(t *testing.T) {
	needRoot(t)
	v := newVault(t)
	mkdir(t, v.dir, "notes", 0o755)
	chown(t, v.dir, "notes", 2002, 2003)
	put(t, v.dir, "notes/a.md", "alpha", 0o644)
	chown(t, v.dir, "notes/a.md", 1001, 1001)
	put(t, v.dir, "notes/b.md", "bravo", 0o644)
	put(t, v.dir, "notes/c.md", "charlie", 0o644)
	chown(t, v.dir, "notes/c.md", 1005, 1006)
	symlink(t, v.dir, "notes/sl", "a.md")
	chown(t, v.dir, "notes/sl", 1007, 1007)
	mkdir(t, v.dir, "notes/sub2", 0o755)
	put(t, v.dir, "old/x.md", "x", 0o644)
	put(t, v.dir, "old/deep/y.md", "y", 0o644)
	put(t, v.dir, "dirA/z.md", "zulu", 0o644)
	_, l := newLayer(t)

	changes := []txn.Change{
		createFile(t, l, "notes/new.md", "a new note\n", 0o640),
		modifyFile(t, v, l, "notes/a.md", "notes/a.md", "alpha, edited\n", 0o600),
		{Op: txn.Create, Path: "notes/sub", Dir: true, After: &txn.State{Mode: fs.ModeDir | 0o750}},
		createFile(t, l, "notes/sub/x.md", "in a new folder", 0o644),
		{Op: txn.Create, Path: "notes/ln", After: &txn.State{Mode: fs.ModeSymlink | 0o777, Target: "a.md"}},
		{Op: txn.Delete, Path: "notes/b.md", Before: stateOf(t, v.dir, "notes/b.md")},
		{Op: txn.Delete, Path: "old", Dir: true, Before: stateOf(t, v.dir, "old")},
		{Op: txn.Move, Path: "notes/c2.md", From: "notes/c.md", Before: stateOf(t, v.dir, "notes/c.md")},
		modifyFile(t, v, l, "notes/c2.md", "notes/c.md", "charlie, moved and edited", 0o644),
		{Op: txn.Move, Path: "dirB", From: "dirA", Dir: true, Before: stateOf(t, v.dir, "dirA")},
		{Op: txn.Link, Path: "notes/hard.md", From: "notes/a.md"},
		{Op: txn.Modify, Path: "notes/sub2", Dir: true, Before: stateOf(t, v.dir, "notes/sub2"),
			After: &txn.State{Mode: fs.ModeDir | 0o700}},
		{Op: txn.Modify, Path: "notes/sl", Before: stateOf(t, v.dir, "notes/sl"),
			After: &txn.State{Mode: fs.ModeSymlink | 0o777, Target: "c2.md"}},
		createFile(t, l, "notes/suid", "#!/bin/sh\n", 0o4755|fs.ModeSetuid),
	}
	// The command ran as another uid: what it wrote is not what the vault gets.
	for _, name := range []string{"notes/new.md", "notes/a.md", "notes/sub/x.md", "notes/c2.md"} {
		chown(t, l.Upper, name, 4242, 4242)
	}
	if err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)}); err != nil {
		t.Fatal(err)
	}

	link := fs.ModeSymlink | 0o777
	sameTree(t, snapshot(t, v.dir), map[string]entry{
		"notes":          {fs.ModeDir | 0o755, 2002, 2003, ""},
		"notes/new.md":   {0o640, 2002, 2003, "a new note\n"}, // a new file takes its folder's owner
		"notes/a.md":     {0o600, 1001, 1001, "alpha, edited\n"},
		"notes/hard.md":  {0o600, 1001, 1001, "alpha, edited\n"},
		"notes/sub":      {fs.ModeDir | 0o750, 2002, 2003, ""},
		"notes/sub/x.md": {0o644, 2002, 2003, "in a new folder"},
		"notes/ln":       {link, 2002, 2003, "a.md"},
		"notes/c2.md":    {0o644, 1005, 1006, "charlie, moved and edited"},
		"notes/sl":       {link, 1007, 1007, "c2.md"},
		"notes/sub2":     {fs.ModeDir | 0o700, 0, 0, ""},
		"notes/suid":     {0o755, 2002, 2003, "#!/bin/sh\n"}, // never setuid
		"dirB":           {fs.ModeDir | 0o755, 0, 0, ""},
		"dirB/z.md":      {0o644, 0, 0, "zulu"},
	})
	a, _ := os.Stat(filepath.Join(v.dir, "notes/a.md"))
	h, _ := os.Stat(filepath.Join(v.dir, "notes/hard.md"))
	if !os.SameFile(a, h) {
		t.Error("notes/hard.md is not a hard link of notes/a.md")
	}
}

// TestCommitConflictChangesNothing: a vault file changed while the
// command ran refuses the whole commit, the unrelated changes included.
func TestCommitConflictChangesNothing(t *testing.T) {
	tests := []struct {
		name    string
		changes func(v *vault, l *txn.Layer) []txn.Change
		outside func(v *vault) // what a sync client or editor does during the call
		want    string         // the path named by the conflict
	}{
		{
			name: "a modified file was edited during the call",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{modifyFile(t, v, l, "a.md", "a.md", "agent's", 0o644)}
			},
			outside: func(v *vault) { put(t, v.dir, "a.md", "person's", 0o644) },
			want:    "a.md",
		},
		{
			name: "a modified file was removed during the call",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{modifyFile(t, v, l, "a.md", "a.md", "agent's", 0o644)}
			},
			outside: func(v *vault) { os.Remove(filepath.Join(v.dir, "a.md")) },
			want:    "a.md",
		},
		{
			name: "a deleted file was edited during the call",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{{Op: txn.Delete, Path: "a.md", Before: stateOf(t, v.dir, "a.md")}}
			},
			outside: func(v *vault) { put(t, v.dir, "a.md", "person's", 0o644) },
			want:    "a.md",
		},
		{
			name: "a note deep in a deleted folder was edited during the call",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{{Op: txn.Delete, Path: "d", Dir: true, Before: stateOf(t, v.dir, "d")}}
			},
			outside: func(v *vault) { put(t, v.dir, "d/e/f.md", "person's", 0o644) },
			want:    "d/e/f.md",
		},
		{
			name: "a file appeared where a create goes",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{createFile(t, l, "new.md", "agent's", 0o644)}
			},
			outside: func(v *vault) { put(t, v.dir, "new.md", "person's", 0o644) },
			want:    "new.md",
		},
		{
			name: "a moved file was edited during the call",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{{Op: txn.Move, Path: "a2.md", From: "a.md", Before: stateOf(t, v.dir, "a.md")}}
			},
			outside: func(v *vault) { put(t, v.dir, "a.md", "person's", 0o644) },
			want:    "a.md",
		},
		{
			name: "a file appeared where a move goes",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{{Op: txn.Move, Path: "a2.md", From: "a.md", Before: stateOf(t, v.dir, "a.md")}}
			},
			outside: func(v *vault) { put(t, v.dir, "a2.md", "person's", 0o644) },
			want:    "a2.md",
		},
		{
			name: "the move's new name is edited after the move: the old one is checked",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{
					{Op: txn.Move, Path: "a2.md", From: "a.md", Before: stateOf(t, v.dir, "a.md")},
					modifyFile(t, v, l, "a2.md", "a.md", "agent's", 0o644),
				}
			},
			outside: func(v *vault) { os.Chmod(filepath.Join(v.dir, "a.md"), 0o600) },
			want:    "a.md",
		},
		{
			name: "the vault's file is not the one judged",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				c := modifyFile(t, v, l, "a.md", "a.md", "agent's", 0o644)
				c.Before.Size++
				return []txn.Change{c}
			},
			want: "a.md",
		},
		{
			name: "a folder on the way was replaced by a link",
			changes: func(v *vault, l *txn.Layer) []txn.Change {
				return []txn.Change{modifyFile(t, v, l, "d/e/f.md", "d/e/f.md", "agent's", 0o644)}
			},
			outside: func(v *vault) {
				os.Rename(filepath.Join(v.dir, "d/e"), filepath.Join(v.dir, "d/e.real"))
				os.Symlink("e.real", filepath.Join(v.dir, "d/e"))
			},
			want: "d/e/f.md",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVault(t)
			put(t, v.dir, "a.md", "alpha", 0o644)
			put(t, v.dir, "b.md", "bravo", 0o644)
			put(t, v.dir, "c.md", "charlie", 0o644)
			put(t, v.dir, "d/e/f.md", "foxtrot", 0o644)
			_, l := newLayer(t)
			// Unrelated changes first: a check made on the way would have applied them.
			changes := append([]txn.Change{
				createFile(t, l, "other.md", "unrelated", 0o644),
				modifyFile(t, v, l, "b.md", "b.md", "bravo, edited", 0o644),
				{Op: txn.Delete, Path: "c.md", Before: stateOf(t, v.dir, "c.md")},
			}, tt.changes(v, l)...)
			start := startCall(t, v.fs, l)
			if tt.outside != nil {
				tt.outside(v)
			}
			before := snapshot(t, v.dir)

			err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: start})
			var conflict *txn.ConflictError
			if !errors.As(err, &conflict) || conflict.Path != tt.want {
				t.Fatalf("Commit: %v, want a conflict on %s", err, tt.want)
			}
			sameTree(t, snapshot(t, v.dir), before)
			if exists(filepath.Join(l.Dir, "journal.json")) {
				t.Error("a refused commit left a journal")
			}
		})
	}
}

// TestCommitRefusesMalformed fails closed on lists the rules must have
// refused, before anything is applied.
func TestCommitRefusesMalformed(t *testing.T) {
	regular := &txn.State{Mode: 0o644, Size: 1}
	tests := []struct {
		name   string
		change txn.Change
	}{
		{"a special file", txn.Change{Op: txn.Special, Path: "fifo", After: &txn.State{Mode: fs.ModeNamedPipe}}},
		{"a create of a fifo", txn.Change{Op: txn.Create, Path: "fifo", After: &txn.State{Mode: fs.ModeNamedPipe | 0o644}}},
		{"a name above the vault", txn.Change{Op: txn.Create, Path: "../out.md", After: regular}},
		{"an absolute name", txn.Change{Op: txn.Create, Path: "/etc/passwd", After: regular}},
		{"an unclean name", txn.Change{Op: txn.Create, Path: "a//b.md", After: regular}},
		{"the root", txn.Change{Op: txn.Delete, Path: ".", Dir: true, Before: &txn.State{Mode: fs.ModeDir}}},
		{"a create without a state", txn.Change{Op: txn.Create, Path: "x.md"}},
		{"a modify that changes the kind", txn.Change{Op: txn.Modify, Path: "a.md", Before: regular,
			After: &txn.State{Mode: fs.ModeSymlink, Target: "b"}}},
		{"a move into itself", txn.Change{Op: txn.Move, Path: "d/e", From: "d", Dir: true, Before: &txn.State{Mode: fs.ModeDir}}},
		{"an unknown op", txn.Change{Op: txn.Special + 1, Path: "a.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVault(t)
			put(t, v.dir, "a.md", "alpha", 0o644)
			_, l := newLayer(t)
			changes := []txn.Change{createFile(t, l, "other.md", "unrelated", 0o644), tt.change}
			before := snapshot(t, v.dir)
			err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)})
			if err == nil || errors.As(err, new(*txn.ConflictError)) {
				t.Fatalf("Commit: %v, want a refusal", err)
			}
			sameTree(t, snapshot(t, v.dir), before)
		})
	}
	t.Run("no start time", func(t *testing.T) {
		v := newVault(t)
		_, l := newLayer(t)
		if err := txn.Commit(v.fs, l, []txn.Change{createFile(t, l, "x.md", "x", 0o644)}, txn.CommitOptions{}); err == nil {
			t.Fatal("Commit without a start succeeded")
		}
		if exists(filepath.Join(v.dir, "x.md")) {
			t.Error("x.md was committed")
		}
	})
}

// TestCommitRefusesAnUnjudgedFile: the upper layer's file must be the one
// judged (size and hash); else nothing is applied and no journal stays.
func TestCommitRefusesAnUnjudgedFile(t *testing.T) {
	v := newVault(t)
	put(t, v.dir, "a.md", "alpha", 0o644)
	_, l := newLayer(t)
	changes := []txn.Change{
		{Op: txn.Delete, Path: "a.md", Before: stateOf(t, v.dir, "a.md")},
		createFile(t, l, "x.md", "judged", 0o644),
	}
	put(t, l.Upper, "x.md", "JUDGED", 0o644) // same size, other bytes
	before := snapshot(t, v.dir)
	err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)})
	if err == nil || errors.As(err, new(*txn.IncompleteError)) {
		t.Fatalf("Commit: %v, want a refusal before anything is applied", err)
	}
	sameTree(t, snapshot(t, v.dir), before) // no temporary file left either
	if exists(filepath.Join(l.Dir, "journal.json")) {
		t.Error("the journal of a commit that applied nothing stayed")
	}
}

// TestCommitNeverWritesThroughALink swaps a folder of the vault for a
// link to outside after the checks, with the files staged: the no-follow
// file system refuses the rename, and outside stays as it was.
func TestCommitNeverWritesThroughALink(t *testing.T) {
	v := newVault(t)
	outside := t.TempDir()
	put(t, outside, "a.md", "outside", 0o644)
	put(t, v.dir, "top.md", "top", 0o644)
	put(t, v.dir, "notes/a.md", "alpha", 0o644)
	_, l := newLayer(t)
	changes := []txn.Change{
		modifyFile(t, v, l, "top.md", "top.md", "top, edited", 0o644),
		modifyFile(t, v, l, "notes/a.md", "notes/a.md", "agent's", 0o644),
		createFile(t, l, "notes/b.md", "agent's", 0o644),
	}
	wantOutside := snapshot(t, outside)
	defer txn.SetBeforeStep(func(done int) error {
		if done == 1 {
			if err := os.Rename(filepath.Join(v.dir, "notes"), filepath.Join(v.dir, "notes.real")); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(v.dir, "notes"))
		}
		return nil
	})()
	err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)})
	if !errors.As(err, new(*txn.IncompleteError)) || errors.As(err, new(*txn.ConflictError)) {
		t.Fatalf("Commit: %v, want it stopped, and not taken for a refusal that changed nothing", err)
	}
	sameTree(t, snapshot(t, outside), wantOutside)
	if exists(filepath.Join(v.dir, "notes.real/b.md")) {
		t.Error("notes.real/b.md was written")
	}
}
