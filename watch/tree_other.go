//go:build !linux

package watch

// Tree is a vault's folders, watched: on this system, never exactly, so
// every caller walks.
type Tree struct{}

const noWatch = "this system has no inotify: each call walks the vault"

// New returns a tree that says it can't be exact.
func New(root string, skip func(name string) bool, listeners ...Listener) *Tree {
	return &Tree{}
}

// Start does nothing.
func (t *Tree) Start() {}

// Open returns a tree that says it can't be exact.
func Open(root string, skip func(name string) bool, listeners ...Listener) *Tree {
	return &Tree{}
}

// Sync always answers that the caller must walk.
func (t *Tree) Sync(read func()) error { return &InexactError{Reason: noWatch} }

// Status says why the tree is not exact.
func (t *Tree) Status() Status { return Status{Ready: true, Reason: noWatch} }

// Close does nothing.
func (t *Tree) Close() error { return nil }
