package txn

// SetBeforeStep installs the commit's test hook: f runs before each
// change is applied and once after the last; an error it returns stops
// the commit as a crash would. The returned func removes it.
func SetBeforeStep(f func(done int) error) (restore func()) {
	beforeStep = f
	return func() { beforeStep = nil }
}

// ErrStopped is what a hook returns to cut a commit.
var ErrStopped = errStopped
