package history

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Pruned is what a GC removed.
type Pruned struct {
	Calls int   // calls whose entries went
	Blobs int   // bodies no entry named any more
	Bytes int64 // their size
}

// GC prunes the store to its bounds: calls older than Keep, then the
// oldest calls while the bodies kept exceed MaxSize, then every body no
// remaining entry names. It holds the store's lock alone, so no call
// being recorded loses a body it has just kept.
func (s *Store) GC(now time.Time) (Pruned, error) {
	var p Pruned
	err := s.withLock(syscall.LOCK_EX, func() error {
		ids, err := s.Calls()
		if err != nil {
			return err
		}
		refs := map[string]int{}
		calls := make([][]string, len(ids)) // each call's blobs
		newest := make([]time.Time, len(ids))
		for i, id := range ids {
			es, err := s.Call(id)
			if err != nil && !errors.Is(err, ErrUnknownID) {
				return err
			}
			for _, e := range es {
				calls[i] = append(calls[i], e.Before.blobs()...)
				calls[i] = append(calls[i], e.After.blobs()...)
				if e.Time.After(newest[i]) {
					newest[i] = e.Time
				}
			}
			for _, b := range calls[i] {
				refs[b]++
			}
		}
		sizes := map[string]int64{}
		var total int64
		names, err := readNames(filepath.Join(s.dir, "blobs"))
		if err != nil {
			return err
		}
		for _, n := range names {
			if fi, err := os.Stat(s.blobPath(n)); err == nil {
				sizes[n] = fi.Size()
				if refs[n] > 0 {
					total += fi.Size()
				}
			}
		}
		cutoff := now.Add(-s.opt.Keep)
		for i, id := range ids {
			if !newest[i].Before(cutoff) && total <= s.opt.MaxSize {
				break // ids are oldest first: the rest are newer still
			}
			if err := os.Remove(s.entryPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			p.Calls++
			for _, b := range calls[i] {
				if refs[b]--; refs[b] == 0 {
					total -= sizes[b]
				}
			}
		}
		for n, size := range sizes {
			if refs[n] > 0 {
				continue
			}
			if err := os.Remove(s.blobPath(n)); err == nil {
				p.Blobs++
				p.Bytes += size
			}
		}
		return nil
	})
	return p, err
}
