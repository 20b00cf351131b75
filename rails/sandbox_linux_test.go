package rails

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A locum killed while its verify ran leaves the verify's cgroup behind: the next one removes it
// once it is empty and a minute old, and nothing else.
func TestRemoveStaleCgroups(t *testing.T) {
	own := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{
		cgroupPrefix + "stale": time.Hour, cgroupPrefix + "new": time.Second, cgroupPrefix + "busy": time.Hour, "other": time.Hour,
	} {
		require.NoError(t, os.Mkdir(filepath.Join(own, name), 0o700))
		require.NoError(t, os.Chtimes(filepath.Join(own, name), now.Add(-age), now.Add(-age)))
	}
	// A cgroup with a process in it refuses rmdir; a directory with a file in it stands for one.
	require.NoError(t, os.WriteFile(filepath.Join(own, cgroupPrefix+"busy", "cgroup.procs"), []byte("1\n"), 0o600))
	require.NoError(t, os.Chtimes(filepath.Join(own, cgroupPrefix+"busy"), now.Add(-time.Hour), now.Add(-time.Hour)))
	removeStaleCgroups(own, now)
	entries, err := os.ReadDir(own)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{cgroupPrefix + "busy", cgroupPrefix + "new", "other"}, names)
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/sys/fs/cgroup":     "/sys/fs/cgroup",
		`/mnt/a\040b`:        "/mnt/a b",
		`/a\134b`:            `/a\b`,
		`/trailing\04`:       `/trailing\04`,
		`/not\999octal\011x`: "/not\\999octal\tx",
	} {
		assert.Equal(t, want, unescapeMount(in), in)
	}
}
