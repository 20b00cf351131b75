package gitsafe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsGitName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{".git", true},
		{".GIT", true},
		{".Git", true},
		{".git.", true},
		{".git . .", true},
		{".git::$INDEX_ALLOCATION", true},
		{"git~1", true},
		{"GIT~1", true},
		{".g\u200cit", true},
		{"\ufeff.git", true},
		{".gitignore", false},
		{".gitattributes", false},
		{".gitmodules", false},
		{"git", false},
		{".git2", false},
		{"x.git", false},
		{"git~2", false},
		{"", false},
		{".", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, IsGitName(tt.name), "%q", tt.name)
	}
}

func TestNamesGitDir(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{".git/config", true},
		{"./.git/../.git/config", true},
		{".git", true},
		{"sub/.git/hooks/pre-commit", true},
		{".GIT/config", true},
		{"a/../b/.git.", true},
		{".git/../calc.go", false},
		{"calc.go", false},
		{"sub/.gitignore", false},
		{"git/config", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NamesGitDir(tt.path), tt.path)
	}
}

// GitDir, on a tree holding a git directory under each other name git takes one by.
func TestGitDir(t *testing.T) {
	root := t.TempDir()
	root, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	write := func(name, body string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write(".git", "gitdir: meta\n")
	write("meta/HEAD", "ref: refs/heads/main\n")
	write("meta/config", "")
	write("wt/HEAD", "ref: refs/heads/x\n")
	write("wt/commondir", "../meta\n")
	write("bare.git/HEAD", "ref: refs/heads/main\n")
	write("bare.git/objects/.keep", "")
	write("half/objects/.keep", "")
	write("headonly/HEAD", "ref: refs/heads/main\n")
	write("src/calc.go", "package calc\n")
	write("sub/.git/config", "")

	tests := []struct {
		path, dir string
	}{
		{"meta/config", "meta"},           // named by the .git file, though it holds no objects
		{"meta/hooks/pre-commit", "meta"}, // nothing there yet
		{"wt/config.worktree", "wt"},      // a worktree's git directory, by its commondir
		{"bare.git/config", "bare.git"},   // a HEAD and objects
		{"bare.git/objects/pack/x", "bare.git"},
		{"half/HEAD", "half"},              // the HEAD this write would add completes one
		{"headonly/objects/x", "headonly"}, // and so would the objects
		{".git", ".git"},                   // the .git file itself
		{"sub/.git/config", "sub/.git"},    // a nested repository's
		{"src/.GIT/config", "src/.GIT"},    // in any letter case
		{"src/calc.go", ""},
		{"half/notes.txt", ""},  // objects alone make no git directory
		{"headonly/README", ""}, // nor a HEAD alone
		{"src/HEAD", ""},
		{"../outside/.git/config", ""}, // outside root: Confine's to refuse
		{"meta/../src/calc.go", ""},    // cleaned by Join: src/calc.go
		{"bare.git/../src/new.go", ""},
		{"wt/../half/objects/../notes", ""},
		{"headonly/../headonly/objects/y", "headonly"},
	}
	for _, tt := range tests {
		dir, ok := GitDir(root, filepath.Join(root, filepath.FromSlash(tt.path)))
		if tt.dir == "" {
			assert.False(t, ok, "%s is in %s", tt.path, dir)
			continue
		}
		if assert.True(t, ok, tt.path) {
			assert.Equal(t, filepath.Join(root, filepath.FromSlash(tt.dir)), dir, tt.path)
		}
	}
}

// A .git file that names a folder outside the tree (a worktree's) leaves the tree's own files
// alone.
func TestGitDirOfAWorktree(t *testing.T) {
	main := t.TempDir()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+main+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.go"), nil, 0o644))
	real, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	_, ok := GitDir(real, filepath.Join(real, "a.go"))
	assert.False(t, ok)
	_, ok = GitDir(real, filepath.Join(real, ".git"))
	assert.True(t, ok)
}
