package mcp

import (
	"context"
	"path/filepath"
	"sync"
)

// fileLocks lets one call at a time work on a file. A second call on the same file waits its turn
// (it is queued, not refused): a transform must never interleave with another transform of the
// file, and a summarize must never read an edit that the verify command may yet roll back.
type fileLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// lock waits until the file is free or ctx ends. waiting is called once if the call has to wait.
func (l *fileLocks) lock(ctx context.Context, key string, waiting func()) (unlock func(), err error) {
	told := false
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[string]chan struct{}{}
		}
		busy, ok := l.held[key]
		if !ok {
			done := make(chan struct{})
			l.held[key] = done
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.held, key)
				l.mu.Unlock()
				close(done)
			}, nil
		}
		l.mu.Unlock()
		if !told && waiting != nil {
			told = true
			waiting()
		}
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// lockKey names a file by its real path, so two spellings of one file (a relative path, a
// symbolic link) share a lock. A file that does not resolve keeps its cleaned path: the run
// refuses it anyway.
func lockKey(dir, file string) string {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}
