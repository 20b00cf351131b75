//go:build unix

package rails

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// link gives from the name to, making its folders.
func link(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.Link(from, to))
}

// A file of several hard links may be written in place only where every name is in the tree
// outside its git directories: each other place a tarball, a person or git can hold a name is
// refused, saying how many of the names were found there.
func TestCheckLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		// others gives the file its other names; outside is a folder out of the tree.
		others func(t *testing.T, root, file, outside string)
		// refused: how many names were found of how many; nil where the file passes.
		refused *[2]int
	}{
		{"one link", func(*testing.T, string, string, string) {}, nil},
		{"a second name beside it", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, "copy.go"))
		}, nil},
		{"names in other folders", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, "a", "b", "deep.go"))
			link(t, file, filepath.Join(root, "c", "other.go"))
		}, nil},
		{"a name in .git", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, ".git", "config"))
		}, &[2]int{1, 2}},
		{"a name in a nested repository's .git", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, "sub", ".git", "hooks", "pre-commit"))
		}, &[2]int{1, 2}},
		{"a name in .GIT, which is .git where case does not count", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, ".GIT", "config"))
		}, &[2]int{1, 2}},
		{"a name in a directory git takes for a git directory", func(t *testing.T, root, file, _ string) {
			for _, d := range []string{"objects", "refs"} {
				require.NoError(t, os.MkdirAll(filepath.Join(root, "bare", d), 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(root, "bare", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			link(t, file, filepath.Join(root, "bare", "config"))
		}, &[2]int{1, 2}},
		{"a name in the directory a .git file names", func(t *testing.T, root, file, _ string) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, ".git")))
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: .realgit\n"), 0o644))
			link(t, file, filepath.Join(root, ".realgit", "config"))
		}, &[2]int{1, 2}},
		{"a .git file itself", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, "wt", ".git"))
		}, &[2]int{1, 2}},
		{"a name outside the repository", func(t *testing.T, _, file, outside string) {
			link(t, file, filepath.Join(outside, "elsewhere.go"))
		}, &[2]int{1, 2}},
		{"two names in the tree and one in .git", func(t *testing.T, root, file, _ string) {
			link(t, file, filepath.Join(root, "copy.go"))
			link(t, file, filepath.Join(root, ".git", "description"))
		}, &[2]int{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			root, outside := filepath.Join(base, "repo"), filepath.Join(base, "elsewhere")
			require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
			require.NoError(t, os.MkdirAll(outside, 0o755))
			file := filepath.Join(root, "calc.go")
			require.NoError(t, os.WriteFile(file, []byte("package calc\n"), 0o644))
			tc.others(t, root, file, outside)

			err = CheckLinks(root, file, "calc.go")
			if tc.refused == nil {
				assert.NoError(t, err)
				return
			}
			var he *HardLinkError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, HardLinkError{Path: "calc.go", Links: uint64(tc.refused[1]), Found: tc.refused[0]}, *he)
			assert.Contains(t, err.Error(), "calc.go has")
			assert.Contains(t, err.Error(), "cp -p 'calc.go' 'calc.go.unlinked' && mv 'calc.go.unlinked' 'calc.go'")
		})
	}
}

// A root that is a link to the tree is the tree: the names are found through its real path.
func TestCheckLinksThroughALinkedRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "repo")
	file := filepath.Join(root, "calc.go")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	link(t, file, filepath.Join(root, "copy.go"))
	require.NoError(t, os.Symlink(root, filepath.Join(base, "link")))
	assert.NoError(t, CheckLinks(filepath.Join(base, "link"), file, "calc.go"))
}

// The guard refuses a file linked into .git before it copies anything, and a recovery does not
// write in place through a link into .git made after the crash: the copy is kept.
func TestGuardAndRecoveryRefuseALinkIntoGit(t *testing.T) {
	file, rb := guarded(t, "original\n", 0o644)
	config := filepath.Join(rb.Root, ".git", "config")
	link(t, file, config)
	_, err := GuardFile(file, rb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has 2 hard links and only 1 of them is in the repository outside its git directories")
	entries, _ := os.ReadDir(rb.Dir)
	assert.Empty(t, entries, "no copy and no record")
	require.NoError(t, os.Remove(config))

	g, err := GuardFile(file, rb)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("an edit a crash left behind\n")))
	crash(g)
	link(t, file, config)
	_, err = Recover(rb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has 2 hard links")
	var re *RestoreError
	require.ErrorAs(t, err, &re)
	assert.NotEmpty(t, re.Kept)
	data, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Equal(t, "an edit a crash left behind\n", string(data), "nothing more was written into .git")

	// Once the link is broken, the recovery restores the file.
	require.NoError(t, os.Remove(config))
	_, err = Recover(rb)
	require.NoError(t, err)
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "original\n", string(data))
}
