//go:build unix

package rails

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A build cache as Go makes it is left alone; everything else in it is removed and makes the
// verify's verdict untrusted: a git directory planted there waits for a link to it, and the
// cache outlives the verify.
func TestCheckBuildCache(t *testing.T) {
	entry := func(hexByte, key string) string {
		return hexByte + "/" + hexByte + strings.Repeat("5c", 31) + "-" + key
	}
	goLayout := map[string]string{"README": "go", "trim.txt": "1", "testexpire.txt": "2", entry("00", "a"): "", entry("00", "d"): "", entry("ff", "a"): "",
		"fuzz/example.com/calc/FuzzAdd/3f2e": "go test fuzz v1\n"}
	cases := []struct {
		name  string
		extra map[string]string
		want  []string
	}{
		{"Go's layout", nil, nil},
		{"a repository beside the entries", map[string]string{"zz/HEAD": "", "zz/objects/": "", "zz/refs/": ""}, []string{"zz"}},
		{"a directory in an entry directory", map[string]string{"00/app/.git/HEAD": ""}, []string{"00/app"}},
		{"a link in an entry directory", map[string]string{"0a/x": "->/etc"}, []string{"0a/x"}},
		{"a file Go does not make", map[string]string{"notes.txt": ""}, []string{"notes.txt"}},
		{"an entry directory named in capitals", map[string]string{"AB/x": ""}, []string{"AB"}},
		{"a link at the top", map[string]string{"link": "->00"}, []string{"link"}},
		{"a git directory among the fuzz corpora", map[string]string{"fuzz/p/.git/HEAD": "", "fuzz/q/link": "->/"}, []string{"fuzz/p/.git", "fuzz/q/link"}},
		{"a file an entry directory holds that Go does not name so", map[string]string{"ab/HEAD": "", "ab/commondir": "../fuzz/c"}, []string{"ab/HEAD", "ab/commondir"}},
		{"an entry in another's directory", map[string]string{"01/" + "00" + strings.Repeat("5c", 31) + "-a": ""}, []string{"01/00" + strings.Repeat("5c", 31) + "-a"}},
		{"an entry of another kind", map[string]string{"00/00" + strings.Repeat("5c", 31) + "-x": ""}, []string{"00/00" + strings.Repeat("5c", 31) + "-x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, with(goLayout, tc.extra))
			err := checkBuildCache(dir)
			if tc.want == nil {
				require.Nil(t, err)
			} else {
				require.NotNil(t, err)
				assert.ElementsMatch(t, tc.want, err.Planted)
				assert.Empty(t, err.NotRemoved)
				assert.Contains(t, err.Error(), "Go build cache")
				assert.Contains(t, err.Error(), "its verdict is not trusted")
				for _, p := range tc.want {
					assert.NoFileExists(t, filepath.Join(dir, p))
					assert.NoDirExists(t, filepath.Join(dir, p))
				}
			}
			for p := range goLayout {
				assert.FileExists(t, filepath.Join(dir, p), "Go's own entries stay")
			}
			assert.Nil(t, checkBuildCache(dir), "a second look finds nothing")
		})
	}
	t.Run("the fuzz corpora shaped as a git directory go whole", func(t *testing.T) {
		dir := tree(t, with(goLayout, map[string]string{"fuzz/HEAD": "ref: refs/heads/main\n", "fuzz/objects/": "", "fuzz/refs/": "", "fuzz/config": "[core]\n\tfsmonitor = touch /tmp/owned\n"}))
		err := checkBuildCache(dir)
		require.NotNil(t, err)
		assert.Equal(t, []string{"fuzz"}, err.Planted)
		assert.NoDirExists(t, filepath.Join(dir, "fuzz"))
		assert.FileExists(t, filepath.Join(dir, entry("00", "a")))
	})
	t.Run("past the bound, the cache goes", func(t *testing.T) {
		setBound(t, &gitWalkEntries, 5)
		dir := tree(t, goLayout)
		err := checkBuildCache(dir)
		require.NotNil(t, err)
		require.NotNil(t, err.TooLarge)
		assert.NoDirExists(t, dir)
		assert.Contains(t, err.Error(), "the cache was removed")
	})
	t.Run("no cache yet", func(t *testing.T) {
		assert.Nil(t, checkBuildCache(filepath.Join(t.TempDir(), "build")))
	})
}

// The module cache loses every git directory but Go's own bare repositories under cache/vcs.
func TestCheckModCache(t *testing.T) {
	dir := tree(t, map[string]string{
		"cache/download/example.com/m/@v/v1.0.0.zip": "",
		"cache/vcs/0123abcd/HEAD":                    "", "cache/vcs/0123abcd/objects/": "", "cache/vcs/0123abcd/refs/": "", "cache/vcs/0123abcd/config": "",
		"example.com/m@v1.0.0/m.go":           "package m",
		"example.com/m@v1.0.0/evil/.git/HEAD": "",
		"planted/HEAD":                        "", "planted/objects/": "", "planted/refs/": "",
	})
	require.NoError(t, os.Chmod(filepath.Join(dir, "example.com/m@v1.0.0"), 0o555), "as go makes it without -modcacherw")
	err := checkModCache(dir)
	require.NotNil(t, err)
	assert.ElementsMatch(t, []string{"example.com/m@v1.0.0/evil/.git", "planted"}, err.Planted)
	assert.Empty(t, err.NotRemoved)
	assert.Contains(t, err.Error(), "Go module cache")
	assert.NoDirExists(t, filepath.Join(dir, "example.com/m@v1.0.0/evil/.git"))
	assert.NoDirExists(t, filepath.Join(dir, "planted"))
	assert.FileExists(t, filepath.Join(dir, "example.com/m@v1.0.0/m.go"))
	assert.DirExists(t, filepath.Join(dir, "cache/vcs/0123abcd/objects"), "go's own bare repository stays")
	assert.Nil(t, checkModCache(dir))
}
