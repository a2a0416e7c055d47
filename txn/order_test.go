package txn

import (
	"strings"
	"testing"
)

func TestOrder(t *testing.T) {
	file := &State{Mode: 0o644}
	dir := &State{Mode: 0o755 | 1<<31}
	for _, tc := range []struct {
		name    string
		changes []Change
		want    string
	}{
		{name: "by path, a folder before what it holds",
			changes: []Change{{Op: Create, Path: "n/x.md", After: file}, {Op: Create, Path: "n", Dir: true, After: dir}, {Op: Create, Path: "a.md", After: file}},
			want:    "create a.md|create n|create n/x.md"},
		{name: "a delete before what takes the name",
			changes: []Change{{Op: Create, Path: "a", Dir: true, After: dir}, {Op: Delete, Path: "a", Before: file}},
			want:    "delete a|create a"},
		{name: "a move out before the folder is deleted",
			changes: []Change{{Op: Delete, Path: "d", Dir: true, Before: dir}, {Op: Move, Path: "x", From: "d/c", Before: file, After: file}},
			want:    "move d/c->x|delete d"},
		{name: "a folder's move before a move out of it",
			changes: []Change{{Op: Move, Path: "c", From: "z/c", Before: file, After: file}, {Op: Move, Path: "z", From: "d", Dir: true, Before: dir, After: dir}},
			want:    "move d->z|move z/c->c"},
		{name: "a move away before a new file takes the old name",
			changes: []Change{{Op: Create, Path: "a", After: file}, {Op: Move, Path: "z", From: "a", Before: file, After: file}},
			want:    "move a->z|create a"},
		{name: "a link after the name it links to",
			changes: []Change{{Op: Link, Path: "a", From: "z", After: file}, {Op: Create, Path: "z", After: file}},
			want:    "create z|link z->a"},
		{name: "a modify after the move that brings the file",
			changes: []Change{{Op: Modify, Path: "b", Before: file, After: file}, {Op: Move, Path: "b", From: "a", Before: file, After: file}},
			want:    "move a->b|modify b"},
		{name: "a swap is a cycle: every change is kept, in path order",
			changes: []Change{{Op: Move, Path: "b", From: "a", Before: file, After: file}, {Op: Move, Path: "a", From: "b", Before: file, After: file}},
			want:    "move b->a|move a->b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range order(tc.changes) {
				s := c.Op.String() + " " + c.Path
				if c.From != "" {
					s = c.Op.String() + " " + c.From + "->" + c.Path
				}
				got = append(got, s)
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("order %s, want %s", g, tc.want)
			}
		})
	}
}
