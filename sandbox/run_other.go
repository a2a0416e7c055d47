//go:build !linux

package sandbox

import "context"

func run(context.Context, *call) (Result, error) { return Result{}, ErrUnsupported }

// readMounts: no helper is started ahead off Linux.
func readMounts() *mountRead { return nil }

// Supported says this system can run a bash call. Off Linux there is no
// pid namespace and no /proc sweep to end every process of a call, so the
// bash tool is not offered at all.
const Supported = false
