package txn

import "testing"

// SetBeforeStep installs the commit's test hook: f runs before each
// change is applied and once after the last; an error it returns stops
// the commit as a crash would. The returned func removes it.
func SetBeforeStep(f func(done int) error) (restore func()) {
	beforeStep = f
	return func() { beforeStep = nil }
}

// ErrStopped is what a hook returns to cut a commit.
var ErrStopped = errStopped

// ThroughOverlay runs script in an overlay of vault with l as its upper
// layer, as the overlay tests do: mounted by root, or in a user
// namespace.
func ThroughOverlay(t testing.TB, base, vault string, l *Layer, privileged bool, script string) {
	mode := asRoot
	if !privileged {
		mode = overlayMode{"userns", false, 0}
	}
	changeThroughOverlay(t, base, vault, l, mode, script)
}

// TestBase is a fresh folder whose path a mount option can carry.
var TestBase = testBase
