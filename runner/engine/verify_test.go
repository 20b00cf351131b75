package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/internal/runtest"
)

// The key that signs routing is hidden from the verify wherever the operator keeps it: where the
// user config's signing_key names it (~/ is the home directory), and where LOCUM_SIGNING_KEY does.
func TestVerifySandboxHidesTheSigningKey(t *testing.T) {
	home, config := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("LOCUM_SIGNING_KEY", "")
	s := runtest.SettingsFor(t, "http://127.0.0.1:1/v1")
	repo := t.TempDir()
	assert.Empty(t, VerifySandbox(s, repo, repo).HiddenFiles, "no user config, no key")

	require.NoError(t, os.MkdirAll(filepath.Join(config, "locum"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(config, "locum", "config.json"), []byte(`{"signing_key":"~/keys/routing.key","roles":{}}`), 0o600))
	assert.Equal(t, []string{filepath.Join(home, "keys", "routing.key")}, VerifySandbox(s, repo, repo).HiddenFiles)
	t.Setenv("LOCUM_SIGNING_KEY", "/elsewhere/env.key")
	assert.Equal(t, []string{filepath.Join(home, "keys", "routing.key"), "/elsewhere/env.key"}, VerifySandbox(s, repo, repo).HiddenFiles)
}

// A verify's Go caches are its repository's: the same for the repository and every worktree of
// it (an agent's, a workflow's items, under the git directory), another for another repository,
// and never where locum keeps its other files.
func TestVerifyCachesArePerRepository(t *testing.T) {
	cache, state, config := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", config)
	repo, other := t.TempDir(), t.TempDir()
	wt := filepath.Join(repo, ".git", "locum", "worktrees", "r1")
	require.NoError(t, os.MkdirAll(wt, 0o755))
	s := runtest.SettingsFor(t, "http://127.0.0.1:1/v1")

	own := VerifySandbox(s, repo, repo)
	assert.Equal(t, own.GoCaches, VerifySandbox(s, repo, wt).GoCaches, "a worktree shares its repository's cache")
	assert.NotEqual(t, own.GoCaches, VerifySandbox(s, other, other).GoCaches, "another repository has its own")
	assert.True(t, strings.HasPrefix(own.GoCaches, filepath.Join(cache, "locum", "verify-go")+string(filepath.Separator)), own.GoCaches)
	assert.Equal(t, []string{filepath.Join(state, "locum"), filepath.Join(cache, "locum"), filepath.Join(config, "locum")}, own.Hidden)

	if ok, why := rails.SandboxAvailable(); !ok {
		t.Skip(why)
	}
	// The run's repository, not the tree the verify judges, keys the cache.
	var seen []string
	step := Step{Name: "verify", Run: func(ctx context.Context, r *Run) error {
		for _, dir := range []string{repo, wt} {
			vr, err := r.Verify(ctx, `echo "$GOCACHE"`, dir)
			if err != nil {
				return err
			}
			seen = append(seen, strings.TrimSpace(string(vr.Output)))
		}
		return nil
	}}
	res := Execute(context.Background(), RunSpec{Mode: "transform", Root: repo, Settings: s, Model: "m",
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}, []Step{step})
	require.Nil(t, res.Error)
	assert.Equal(t, []string{filepath.Join(own.GoCaches, "build"), filepath.Join(own.GoCaches, "build")}, seen)
}
