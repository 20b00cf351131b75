//go:build unix

package rails

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree makes a directory of the entries given: a path ending in / is a directory, "->T" a link
// to T, anything else a file with that text.
func tree(t *testing.T, entries map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, p := range sortedKeys(entries) {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		switch v := entries[p]; {
		case p[len(p)-1] == '/':
			require.NoError(t, os.MkdirAll(full, 0o755))
		case len(v) > 2 && v[:2] == "->":
			require.NoError(t, os.Symlink(v[2:], full))
		default:
			require.NoError(t, os.WriteFile(full, []byte(v), 0o644))
		}
	}
	return root
}

var gitDir = map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": "", ".git/config": ""}

func with(base map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// What a verify may plant in its tree that git would obey later, and what it may not change.
func TestPlantedGit(t *testing.T) {
	cases := []struct {
		name    string
		before  map[string]string
		verify  func(t *testing.T, root string)
		planted []string
		after   func(t *testing.T, root string)
	}{
		{"nothing new", gitDir, func(t *testing.T, root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "f.go"), nil, 0o644))
		}, nil, nil},
		{"a repository in a folder", gitDir, func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "app/.git/hooks"), 0o755))
		}, []string{"app/.git"}, func(t *testing.T, root string) {
			assert.NoDirExists(t, filepath.Join(root, "app/.git"))
			assert.DirExists(t, filepath.Join(root, "app"))
		}},
		{"a .git file naming a directory of its own", gitDir, func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "d/.git"), []byte("gitdir: ../evil\n"), 0o644))
		}, []string{"d/.git"}, func(t *testing.T, root string) {
			assert.NoFileExists(t, filepath.Join(root, "d/.git"))
		}},
		{"a bare repository", gitDir, func(t *testing.T, root string) {
			for _, d := range []string{"b/objects", "b/refs"} {
				require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(root, "b/HEAD"), []byte("ref: refs/heads/x\n"), 0o644))
		}, []string{"b"}, nil},
		{"a worktree's git directory, by commondir", gitDir, func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "w"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "w/HEAD"), []byte("ref: refs/heads/x\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(root, "w/commondir"), []byte("../.git\n"), 0o644))
		}, []string{"w"}, nil},
		{"a .git link pointed elsewhere is put back", with(gitDir, map[string]string{"sub/.realgit/": "", "sub/.git": "->.realgit"}), func(t *testing.T, root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "sub/.git")))
			require.NoError(t, os.Symlink("/tmp", filepath.Join(root, "sub/.git")))
		}, []string{"sub/.git"}, func(t *testing.T, root string) {
			target, err := os.Readlink(filepath.Join(root, "sub/.git"))
			require.NoError(t, err)
			assert.Equal(t, ".realgit", target)
		}},
		{"a .git link removed is put back", with(gitDir, map[string]string{"sub/.realgit/": "", "sub/.git": "->.realgit"}), func(t *testing.T, root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "sub/.git")))
		}, []string{"sub/.git"}, func(t *testing.T, root string) {
			target, err := os.Readlink(filepath.Join(root, "sub/.git"))
			require.NoError(t, err)
			assert.Equal(t, ".realgit", target)
		}},
		{"the tree's own .git replaced", gitDir, func(t *testing.T, root string) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, ".git")))
			require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
		}, []string{".git"}, nil},
		{"a nested repository that was there stays", with(gitDir, map[string]string{"vendor/x/.git/HEAD": "", "fixtures/bare/HEAD": "", "fixtures/bare/objects/": "", "fixtures/bare/refs/": ""}),
			func(t *testing.T, root string) {}, nil, func(t *testing.T, root string) {
				assert.DirExists(t, filepath.Join(root, "vendor/x/.git"))
				assert.DirExists(t, filepath.Join(root, "fixtures/bare"))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.before)
			before, err := scanGit(root)
			require.NoError(t, err)
			tc.verify(t, root)
			err = before.planted(nil)
			if tc.planted == nil {
				require.NoError(t, err)
			} else {
				var pe *PlantedGitError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tc.planted, pe.Planted)
				assert.Empty(t, pe.NotRemoved)
				again, err := scanGit(root)
				require.NoError(t, err)
				require.NoError(t, again.planted(nil), "a second look finds nothing: what was planted is gone")
			}
			if tc.after != nil {
				tc.after(t, root)
			}
		})
	}
}

// The git directories kept read-only are those that lie inside a tree the verify may write,
// however the tree names them; one outside is read-only already, and binding it (a .git file
// naming /dev) would show the sandbox what it must not see.
func TestGitReadOnly(t *testing.T) {
	cases := []struct {
		name    string
		entries map[string]string
		want    []string
	}{
		{"a .git directory", gitDir, []string{".git"}},
		{"a .git file naming a directory in the tree", map[string]string{".git": "gitdir: .realgit\n", ".realgit/HEAD": ""}, []string{".git", ".realgit"}},
		{"a .git file naming a directory outside", map[string]string{".git": "gitdir: /dev\n"}, []string{".git"}},
		{"a .git link to a directory in the tree", map[string]string{".git": "->.realgit", ".realgit/HEAD": ""}, []string{".realgit"}},
		{"a .git link out of the tree", map[string]string{".git": "->/dev"}, nil},
		{"a worktree's, with its common directory in the tree", map[string]string{".git": "gitdir: main/.git/worktrees/w\n",
			"main/.git/worktrees/w/commondir": "../..\n", "main/.git/HEAD": ""}, []string{".git", "main/.git/worktrees/w", "main/.git"}},
		{"a nested repository and a bare one", with(gitDir, map[string]string{"vendor/x/.git/HEAD": "", "fx/HEAD": "", "fx/objects/": "", "fx/refs/": ""}),
			[]string{".git", "fx", "vendor/x/.git"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.entries)
			scan, err := scanGit(root)
			require.NoError(t, err)
			var want []string
			for _, p := range tc.want {
				want = append(want, filepath.Join(root, p))
			}
			assert.Equal(t, want, scan.readOnly([]string{root}))
		})
	}
}

// In the sandbox the resolved git directory is read-only wherever the tree's .git names it, and
// a repository the verify makes is removed, its verdict an error; without the sandbox (the
// operator's none) the second holds too.
func TestVerifyGitDirectories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Run("gitdir: .realgit is read-only", func(t *testing.T) {
		if ok, why := SandboxAvailable(); !ok {
			t.Skip(why)
		}
		root := tree(t, map[string]string{".git": "gitdir: .realgit\n", ".realgit/HEAD": "ref: refs/heads/main\n",
			".realgit/objects/": "", ".realgit/refs/": "", ".realgit/config": "", ".realgit/hooks/": ""})
		res, err := RunShell(context.Background(), ShellCommand{Dir: root, Sandbox: &Sandbox{Writable: []string{root}},
			Command: "echo 'touch pwned' > .realgit/hooks/pre-commit; git config core.fsmonitor 'touch pwned'; echo kept > mark; exit 1"})
		require.NoError(t, err)
		assert.Equal(t, 1, res.ExitCode)
		assert.NoFileExists(t, filepath.Join(root, ".realgit/hooks/pre-commit"))
		config, err := os.ReadFile(filepath.Join(root, ".realgit/config"))
		require.NoError(t, err)
		assert.Empty(t, string(config))
		assert.FileExists(t, filepath.Join(root, "mark"), "the tree itself stays writable")
	})
	for _, off := range []bool{false, true} {
		name := "git init app is refused in the sandbox"
		if off {
			name = "git init app is refused without the sandbox"
		} else if ok, why := SandboxAvailable(); !ok {
			t.Run(name, func(t *testing.T) { t.Skip(why) })
			continue
		}
		t.Run(name, func(t *testing.T) {
			root := tree(t, gitDir)
			res, err := RunShell(context.Background(), ShellCommand{Dir: root, Sandbox: &Sandbox{Writable: []string{root}, Off: off},
				Command: "git init -q app && git -C app config core.fsmonitor 'touch pwned'; exit 0"})
			var pe *PlantedGitError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, []string{"app/.git"}, pe.Planted)
			assert.Contains(t, err.Error(), "app/.git")
			assert.Equal(t, 0, res.ExitCode, "the verdict is still reported, and not trusted")
			assert.NoDirExists(t, filepath.Join(root, "app/.git"))
		})
	}
}

// setBound lowers one of the walk's bounds for a test.
func setBound(t *testing.T, bound *int, v int) {
	t.Helper()
	old := *bound
	*bound = v
	t.Cleanup(func() { *bound = old })
}

// A tree past a bound before the command is not run in; one the command left past a bound is
// not trusted, without saying it was not run: what was read of it is cleaned as ever, and the
// rest may hold a git directory, which the message says how to find.
func TestGitWalkBounds(t *testing.T) {
	t.Run("entries, after", func(t *testing.T) {
		setBound(t, &gitWalkEntries, 40)
		root := tree(t, with(gitDir, map[string]string{"a.go": ""}))
		before, err := scanGit(root)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "app/.git"), 0o755))
		for i := range 60 {
			require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d", i)), nil, 0o644))
		}
		err = before.planted(nil)
		var pe *PlantedGitError
		require.ErrorAs(t, err, &pe)
		require.NotNil(t, pe.TooLarge)
		assert.Equal(t, "entries", pe.TooLarge.What)
		assert.NotContains(t, err.Error(), "was not run")
		assert.Contains(t, err.Error(), "the tree may now hold git directories locum could not check")
		assert.Contains(t, err.Error(), "find '"+root+"' -name .git")
		assert.Contains(t, err.Error(), "its verdict is not trusted")

		_, err = scanGit(root)
		var tl *TreeTooLargeError
		require.ErrorAs(t, err, &tl, "before a command, the same tree is refused")
		assert.Contains(t, err.Error(), "the verify was not run")
	})
	t.Run("directories waiting", func(t *testing.T) {
		setBound(t, &gitWalkDirs, 5)
		entries := map[string]string{}
		for i := range 8 {
			entries[fmt.Sprintf("d%d/", i)] = ""
		}
		_, err := scanGit(tree(t, entries))
		var tl *TreeTooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, "directories", tl.What)
	})
	t.Run("git directories", func(t *testing.T) {
		setBound(t, &gitWalkGitDirs, 3)
		entries := map[string]string{}
		for i := range 4 {
			entries[fmt.Sprintf("d%d/.git/HEAD", i)] = ""
		}
		_, err := scanGit(tree(t, entries))
		var tl *TreeTooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, "git directories", tl.What)
	})
	t.Run("one large directory is read a batch at a time", func(t *testing.T) {
		root := tree(t, gitDir)
		before, err := scanGit(root)
		require.NoError(t, err)
		for i := range 3000 {
			require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%04d", i)), nil, 0o644))
		}
		require.NoError(t, os.MkdirAll(filepath.Join(root, "zz/.git"), 0o755))
		var pe *PlantedGitError
		require.ErrorAs(t, before.planted(nil), &pe)
		assert.Equal(t, []string{"zz/.git"}, pe.Planted)
		assert.Nil(t, pe.TooLarge)
	})
}

// A symbolic link from the tree into a directory the command could write outside it (its Go
// caches, the operator's caches, its scratch directory) is removed after it, old or new, however
// it gets there: git's discovery walks up from where the link lands, so a git directory the
// command planted there would run at the next git in the link. Other links stay.
func TestPlantedLinks(t *testing.T) {
	fence, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(fence, "zz/deep"), 0o755))
	elsewhere, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Symlink(fence, filepath.Join(elsewhere, "via")))
	root := tree(t, with(gitDir, map[string]string{"old": "->" + filepath.Join(fence, "zz"), "keep/in-tree": "->../a.go", "a.go": "",
		"keep/out": "->/usr", "keep/dangling": "->/nowhere/at/all"}))
	before, err := scanGit(root)
	require.NoError(t, err)
	rel, err := filepath.Rel(root, filepath.Join(fence, "zz"))
	require.NoError(t, err)
	links := map[string]string{
		"app":          filepath.Join(fence, "zz"),
		"sub/deep":     filepath.Join(fence, "zz", "deep"),
		"the-fence":    fence,
		"relative":     rel,
		"through-link": filepath.Join(elsewhere, "via", "zz"),
		"gone":         filepath.Join(fence, "not-yet", "there"),
	}
	for p, target := range links {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.Symlink(target, filepath.Join(root, p)))
	}
	err = before.planted([]string{fence})
	var pe *PlantedGitError
	require.ErrorAs(t, err, &pe)
	var named []string
	for _, l := range pe.Links {
		name, _, _ := strings.Cut(l, " -> ")
		named = append(named, name)
	}
	assert.ElementsMatch(t, []string{"app", "sub/deep", "the-fence", "relative", "through-link", "gone", "old"}, named)
	assert.Empty(t, pe.NotRemoved)
	assert.Contains(t, err.Error(), "symbolic links")
	for _, p := range append(named, "old") {
		_, err := os.Lstat(filepath.Join(root, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, p)
	}
	for _, p := range []string{"keep/in-tree", "keep/out", "keep/dangling"} {
		_, err := os.Lstat(filepath.Join(root, p))
		assert.NoError(t, err, p)
	}
	require.NoError(t, before.planted([]string{fence}), "a second look finds nothing")
}

// A directory locum cannot read before the command means the command may not run: a git
// directory made in it could not be found after. One it leaves behind makes its verdict
// untrusted.
func TestUnreadableDirectories(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory; TestUnreadableDirectoriesAsAUser runs this as a normal user")
	}
	unreadableScenario(t, tree(t, gitDir))
}

// A .git link is followed as git follows it, before the verify and after: a link that led
// nowhere, or to a file the verify could replace, must not come to lead into a git directory the
// verify made, in the tree or in its Go build cache (fuzz, whose corpora it writes). The
// verify's verdict is then not trusted, the file the link leads to is removed, the link stays as
// it was, and the cache loses what git would take for a repository.
func TestGitLinksLeadWhereTheyLed(t *testing.T) {
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	plantFuzz := `mkdir -p "$GOCACHE/fuzz/objects" "$GOCACHE/fuzz/refs" && echo 'ref: refs/heads/main' > "$GOCACHE/fuzz/HEAD" && printf '[core]\n\tfsmonitor = touch owned\n' > "$GOCACHE/fuzz/config"; `
	cases := []struct {
		name, attack, via string
		files             map[string]string
	}{
		{"a link that led nowhere", plantFuzz + `echo "gitdir: $GOCACHE/fuzz" > app/gitfile`, "app/gitfile",
			map[string]string{"app/.git": "->gitfile", "app/a.go": ""}},
		{"a link to a file whose directory the verify replaced", plantFuzz + `mv sub sub.old && mkdir sub && echo "gitdir: $GOCACHE/fuzz" > sub/gitfile`, "sub/gitfile",
			map[string]string{"app/.git": "->../sub/gitfile", "sub/gitfile": "gitdir: ../gd\n", "gd/HEAD": "ref: refs/heads/main\n", "gd/objects/": "", "gd/refs/": ""}},
		{"a link that led nowhere, to a repository in the tree", `mkdir -p x/objects x/refs && echo 'ref: refs/heads/main' > x/HEAD && echo "gitdir: ../x" > app/gitfile`, "app/gitfile",
			map[string]string{"app/.git": "->gitfile", "app/a.go": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.files)
			caches, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			res, err := RunShell(context.Background(), ShellCommand{Dir: root, Sandbox: &Sandbox{Writable: []string{root}, GoCaches: caches},
				Command: tc.attack + "exit 0"})
			require.Equal(t, SandboxBwrap, res.Sandbox, res.SandboxWhy)
			var pe *PlantedGitError
			require.ErrorAs(t, err, &pe, "output: %s", res.Output)
			assert.Contains(t, err.Error(), "not trusted")
			assert.NoFileExists(t, filepath.Join(root, tc.via), "the file the link now leads to")
			target, err := os.Readlink(filepath.Join(root, "app/.git"))
			require.NoError(t, err)
			assert.Equal(t, tc.files["app/.git"][2:], target)
			assert.NoDirExists(t, filepath.Join(caches, "build", "fuzz"))
			leadsTo, _ := gitDirOf(filepath.Join(root, "app/.git"))
			assert.NotContains(t, leadsTo, caches)
		})
	}
}
