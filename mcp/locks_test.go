package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileLockQueuesTheSecondCall(t *testing.T) {
	var l fileLocks
	first, err := l.lock(context.Background(), "a", nil)
	require.NoError(t, err)

	waiting := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		unlock, err := l.lock(context.Background(), "a", func() { close(waiting) })
		if err == nil {
			unlock()
		}
		got <- err
	}()
	<-waiting
	// Another file is not held up.
	other, err := l.lock(context.Background(), "b", func() { t.Error("file b waited for file a") })
	require.NoError(t, err)
	other()
	select {
	case <-got:
		t.Fatal("the second call ran while the first held the file")
	default:
	}
	first()
	require.NoError(t, <-got)
}

func TestFileLockWaitEndsWithTheCall(t *testing.T) {
	var l fileLocks
	unlock, err := l.lock(context.Background(), "a", nil)
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("host cancelled")
	_, err = l.lock(ctx, "a", func() { cancel(stop) })
	assert.ErrorIs(t, err, stop)
}

func TestLockKeySharesOneFileUnderTwoNames(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.go"), nil, 0o644))
	require.NoError(t, os.Symlink("a.go", filepath.Join(dir, "link.go")))
	assert.Equal(t, lockKey(dir, "a.go"), lockKey(dir, "link.go"))
	assert.Equal(t, lockKey(dir, "a.go"), lockKey("/", filepath.Join(dir, "sub", "..", "a.go")))
}
