package txn

import (
	"container/heap"
	"sort"
	"strings"
)

// opRank orders changes at the same path: what leaves a name before what takes it.
var opRank = [...]int{Delete: 0, Move: 1, Create: 2, Modify: 3, Special: 4, Link: 5}

// order sorts changes by path and then moves each after what it needs, keeping the
// path order wherever no need says otherwise. If the needs form a cycle (a swap of two
// names), the rest keep path order.
func order(changes []Change) []Change {
	idx := make([]int, len(changes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := changes[idx[a]], changes[idx[b]]
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		if opRank[x.Op] != opRank[y.Op] {
			return opRank[x.Op] < opRank[y.Op]
		}
		return x.From < y.From
	})
	sorted := make([]Change, len(changes))
	for i, j := range idx {
		sorted[i] = changes[j]
	}

	// Where each name is made (a folder created or moved in, a file's final name) and
	// where a name leaves (a delete).
	makes := map[string][]int{}
	folderAt := map[string]int{}
	deletedAt := map[string]int{}
	for i, c := range sorted {
		if c.Op != Delete {
			makes[c.Path] = append(makes[c.Path], i)
		}
		if c.Dir && (c.Op == Create || c.Op == Move) {
			folderAt[c.Path] = i
		}
		if c.Op == Delete {
			deletedAt[c.Path] = i
		}
	}
	after := make([][]int, len(sorted)) // after[i]: changes that must wait for i
	needs := make([]int, len(sorted))
	need := func(first, then int) {
		if first != then {
			after[first] = append(after[first], then)
			needs[then]++
		}
	}
	for i, c := range sorted {
		for a := parent(c.Path); a != ""; a = parent(a) {
			if j, ok := folderAt[a]; ok {
				need(j, i)
			}
		}
		if c.Op != Delete {
			for j := i - 1; j >= 0 && sorted[j].Path == c.Path; j-- {
				if sorted[j].Op == Delete || (sorted[j].Op == Move && c.Op == Modify) {
					need(j, i)
				}
			}
		}
		if c.Op == Move {
			for a := parent(c.From); a != ""; a = parent(a) {
				if j, ok := folderAt[a]; ok {
					need(j, i) // moved out of a folder that was moved here first
				}
				if j, ok := deletedAt[a]; ok {
					need(i, j)
				}
			}
			for _, j := range makes[c.From] {
				need(i, j) // the old name must be free before something new takes it
			}
		}
		if c.Op == Link {
			for _, j := range makes[c.From] {
				if sorted[j].Op != Link {
					need(j, i)
				}
			}
		}
	}

	ready := &indexHeap{}
	for i := range sorted {
		if needs[i] == 0 {
			heap.Push(ready, i)
		}
	}
	out := make([]Change, 0, len(sorted))
	done := make([]bool, len(sorted))
	for len(out) < len(sorted) {
		if ready.Len() == 0 {
			for i := range sorted { // a cycle: release the first change still waiting
				if !done[i] {
					needs[i] = 0
					heap.Push(ready, i)
					break
				}
			}
		}
		i := heap.Pop(ready).(int)
		if done[i] {
			continue
		}
		done[i] = true
		out = append(out, sorted[i])
		for _, j := range after[i] {
			if needs[j]--; needs[j] == 0 && !done[j] {
				heap.Push(ready, j)
			}
		}
	}
	return out
}

func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

type indexHeap []int

func (h indexHeap) Len() int           { return len(h) }
func (h indexHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h indexHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *indexHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *indexHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
