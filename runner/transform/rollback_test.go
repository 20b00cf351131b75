package transform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The crash records go where the engine's state goes, never through a link a repository planted.
func TestRollbackDirRefusesWhatARepositoryCouldPlant(t *testing.T) {
	outside := t.TempDir()

	inner := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(inner, ".git"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(inner, ".git", "locum")))
	assert.NotEqual(t, filepath.Join(outside, "rollback"), RollbackDir(inner))

	plain := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(plain, ".locum")))
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	assert.True(t, strings.HasPrefix(RollbackDir(plain), filepath.Join(os.Getenv("XDG_STATE_HOME"), "locum", "repos")), RollbackDir(plain))
}
