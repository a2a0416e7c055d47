//go:build !linux

package sandbox

import "context"

func run(context.Context, *call) (Result, error) { return Result{}, ErrUnsupported }
