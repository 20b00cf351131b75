package gitsafe

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// isolate keeps the machine's and the developer's git config out of a test: what it sets is the
// repository's own.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_EDITOR", "VISUAL", "EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND", "GIT_ALLOW_PROTOCOL", "GIT_NO_LAZY_FETCH", "GIT_CONFIG_PARAMETERS"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// plain runs git as a person would, with none of Run's hardening.
func plain(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustPlain(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := plain(t, dir, args...)
	require.NoError(t, err, out)
	return out
}

var ident = []string{"-c", "user.name=t", "-c", "user.email=t@t"}

// newRepo is a repository with one commit of f.txt (and what files holds) in a folder of its own.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	files["f.txt"] = "one\n"
	return gittest.Repo(t, files)
}

// partial makes the repository at dir a partial clone whose promisor remote is url, and removes
// the loose blob of rev.
func partial(t *testing.T, dir, rev, url string) {
	t.Helper()
	oid := strings.TrimSpace(mustPlain(t, dir, "rev-parse", rev))
	require.NoError(t, os.Remove(filepath.Join(dir, ".git", "objects", oid[:2], oid[2:])))
	for _, kv := range [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.partialClone", "origin"},
		{"remote.origin.url", url}, {"remote.origin.promisor", "true"}} {
		mustPlain(t, dir, "config", kv[0], kv[1])
	}
}

// Each way a repository's own config makes git run a program: plain git runs it (the route is
// real in the git installed here), Run does not.
func TestRunRunsNothingTheRepositoryNames(t *testing.T) {
	isolate(t)
	type setup func(t *testing.T, dir, mark string) []string
	config := func(t *testing.T, dir string, kvs ...string) {
		for i := 0; i+1 < len(kvs); i += 2 {
			mustPlain(t, dir, "config", kvs[i], kvs[i+1])
		}
	}
	tests := []struct {
		name  string
		files map[string]string
		setup setup
		// wantMissing: Run's error is a *MissingObjectsError; otherwise only the marker counts.
		wantMissing bool
	}{
		{"a hook", nil, func(t *testing.T, dir, mark string) []string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "hooks", "post-commit"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755))
			return append(ident, "commit", "-q", "--allow-empty", "-m", "x")
		}, false},
		{"the fsmonitor", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "core.fsmonitor", "touch "+mark+"; false")
			return []string{"status", "--porcelain"}
		}, false},
		{"an external diff", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "diff.external", "touch "+mark+"; true")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("two\n"), 0o644))
			return []string{"diff", "HEAD"}
		}, false},
		{"a textconv", map[string]string{".gitattributes": "*.txt diff=t\n"}, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "diff.t.textconv", "touch "+mark+"; cat")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("two\n"), 0o644))
			return []string{"diff", "HEAD"}
		}, false},
		{"a clean filter", map[string]string{".gitattributes": "*.txt filter=x\n"}, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "filter.x.clean", "touch "+mark+"; cat")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("two\n"), 0o644))
			// --renormalize cleans the file whatever its stat says: a plain add after the
			// hardened one would find the index fresh and, on a slow machine, run no filter.
			return []string{"add", "--renormalize", "f.txt"}
		}, false},
		{"the editor", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "core.editor", "touch "+mark+"; true")
			return append(ident, "commit", "--allow-empty")
		}, false},
		{"ssh, allowed by the repository, with its ssh command", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "remote.origin.url", "ssh://example.invalid/r", "protocol.ssh.allow", "always",
				"core.sshCommand", "touch "+mark+"; false")
			return []string{"fetch", "origin"}
		}, false},
		{"the file transport, allowed by the repository, with its upload-pack", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "remote.origin.url", newRepo(t, map[string]string{}), "protocol.file.allow", "always",
				"remote.origin.uploadpack", "touch "+mark+"; false")
			return []string{"fetch", "origin"}
		}, false},
		{"a push with the repository's receive-pack", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "remote.origin.url", newRepo(t, map[string]string{}), "protocol.file.allow", "always",
				"remote.origin.receivepack", "touch "+mark+"; false")
			return []string{"push", "origin", "HEAD:refs/heads/x"}
		}, false},
		{"a remote helper named by the URL", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "remote.origin.url", "ext::sh -c touch% "+mark, "protocol.ext.allow", "always")
			return []string{"fetch", "origin"}
		}, false},
		{"a remote helper named by remote.origin.vcs", nil, func(t *testing.T, dir, mark string) []string {
			config(t, dir, "remote.origin.url", "sh -c touch% "+mark, "remote.origin.vcs", "ext", "protocol.ext.allow", "always")
			return []string{"fetch", "origin"}
		}, false},
		{"the git protocol through the repository's proxy", nil, func(t *testing.T, dir, mark string) []string {
			proxy := filepath.Join(t.TempDir(), "proxy")
			require.NoError(t, os.WriteFile(proxy, []byte("#!/bin/sh\ntouch "+mark+"\nexit 1\n"), 0o755))
			config(t, dir, "remote.origin.url", "git://example.invalid/r", "protocol.git.allow", "always", "core.gitProxy", proxy)
			return []string{"fetch", "origin"}
		}, false},
		{"a partial clone's lazy fetch", nil, func(t *testing.T, dir, mark string) []string {
			require.NoError(t, os.Remove(filepath.Join(dir, "f.txt")))
			partial(t, dir, "HEAD:f.txt", "ssh://example.invalid/r")
			config(t, dir, "protocol.ssh.allow", "always", "core.sshCommand", "touch "+mark+"; false")
			return []string{"checkout", "--", "f.txt"}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range tt.files {
				files[k] = v
			}
			dir := newRepo(t, files)
			mark := filepath.Join(t.TempDir(), "ran")
			args := tt.setup(t, dir, mark)

			_, err := Run(context.Background(), dir, args...)
			assert.NoFileExists(t, mark, "Run ran the repository's program")
			if tt.wantMissing {
				var missing *MissingObjectsError
				require.ErrorAs(t, err, &missing)
				assert.Contains(t, err.Error(), "is a partial clone that lacks objects this command needs")
				var ge *Error
				assert.False(t, errors.As(err, &ge), "a missing object is no git failure a caller takes for a conflict")
			}

			_, _ = plain(t, dir, args...)
			assert.FileExists(t, mark, "plain git did not run it either: the case tests nothing")
		})
	}
}

// A status or a diff of a repository with a submodule does not start git inside the submodule's
// work tree, where the submodule's own config (its filters) would run.
func TestRunStaysOutOfSubmodules(t *testing.T) {
	isolate(t)
	sub := newRepo(t, map[string]string{".gitattributes": "*.txt filter=x\n"})
	dir := newRepo(t, map[string]string{})
	mustPlain(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	mustPlain(t, dir, append(ident, "commit", "-q", "-m", "sub")...)
	mark := filepath.Join(t.TempDir(), "ran")
	subDir := filepath.Join(dir, "sub")
	mustPlain(t, subDir, "config", "filter.x.clean", "touch "+mark+"; cat")
	// The same size, so git must read the file (through its clean filter) to tell.
	require.NoError(t, os.WriteFile(filepath.Join(subDir, "f.txt"), []byte("two\n"), 0o644))

	for _, args := range [][]string{{"status", "--porcelain"}, {"diff", "HEAD"}} {
		_, err := Run(context.Background(), dir, args...)
		require.NoError(t, err)
		assert.NoFileExists(t, mark, "git %s ran the submodule's filter", args[0])
	}
	_, _ = plain(t, dir, "status", "--porcelain")
	assert.FileExists(t, mark, "plain git did not run it either: the case tests nothing")
}

func TestRunRefusesConfigThatMovesWhatGitReads(t *testing.T) {
	isolate(t)
	for _, kv := range [][2]string{{"include.path", "other.cfg"}, {"includeIf.gitdir:**/worktrees/**.path", "evil.cfg"}, {"core.worktree", "../.."}} {
		t.Run(kv[0], func(t *testing.T) {
			dir := newRepo(t, map[string]string{})
			mustPlain(t, dir, "config", kv[0], kv[1])
			_, err := Run(context.Background(), dir, "status")
			var conf *ConfigError
			require.ErrorAs(t, err, &conf)
			assert.Equal(t, strings.ToLower(kv[0]), strings.ToLower(conf.Key))
		})
	}
}

// Complete tells a commit whose tree the repository holds whole from one a partial clone lacks
// part of, changing nothing and fetching nothing.
func TestComplete(t *testing.T) {
	isolate(t)
	dir := newRepo(t, map[string]string{})
	require.NoError(t, Complete(context.Background(), dir, "HEAD"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g.txt"), []byte("g\n"), 0o644))
	mustPlain(t, dir, "add", "g.txt")
	mustPlain(t, dir, append(ident, "commit", "-q", "-m", "g")...)
	mark := filepath.Join(t.TempDir(), "ran")
	partial(t, dir, "HEAD:g.txt", "ssh://example.invalid/r")
	mustPlain(t, dir, "config", "core.sshCommand", "touch "+mark+"; false")
	err := Complete(context.Background(), dir, "HEAD~1", "HEAD")
	var missing *MissingObjectsError
	require.ErrorAs(t, err, &missing)
	assert.Contains(t, missing.Output, "1 objects missing")
	require.NoError(t, Complete(context.Background(), dir, "HEAD~1"))
	assert.NoFileExists(t, mark)
}

func TestInject(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"diff", "HEAD"}, []string{"diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "HEAD"}},
		{[]string{"status", "--porcelain", "--ignore-submodules=all"}, []string{"status", "--ignore-submodules=dirty", "--porcelain", "--ignore-submodules=all"}},
		{[]string{"-c", "user.name=x", "diff"}, []string{"-c", "user.name=x", "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"}},
		{[]string{"rev-parse", "diff"}, []string{"rev-parse", "diff"}},
		{[]string{"-c", "a=b"}, []string{"-c", "a=b"}},
		{nil, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, inject(tt.in), "%q", tt.in)
	}
}

func TestNeutral(t *testing.T) {
	tests := []struct {
		key  string
		want []override
	}{
		{"filter.x.clean", []override{{"filter.x.clean", ""}, {"filter.x.required", "false"}}},
		{"filter.a=b.process", []override{{"filter.a=b.process", ""}, {"filter.a=b.required", "false"}}},
		{"merge.y.driver", []override{{"merge.y.driver", "false"}}},
		{"protocol.ssh.allow", []override{{"protocol.ssh.allow", "never"}}},
		{"remote.Origin.uploadpack", []override{{"remote.Origin.uploadpack", "git-upload-pack"}}},
		{"remote.o.receivepack", []override{{"remote.o.receivepack", "git-receive-pack"}}},
		{"remote.o.vcs", []override{{"remote.o.vcs", "none"}}},
		{"remote.o.url", nil},
		{"protocol.allow", nil},
		{"merge.y.name", nil},
		{"user.name", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, neutral(tt.key), tt.key)
	}
}

// RunCapped keeps at most its bound of what git prints, cut at a line's end, and counts it all;
// a failure reports what git said on standard error.
func TestRunCapped(t *testing.T) {
	isolate(t)
	body := strings.Repeat("0123456789\n", 100) // 1,100 bytes
	dir := newRepo(t, map[string]string{"big.txt": body})
	for _, tt := range []struct {
		name  string
		limit int
		want  string
	}{
		{"within the bound", 2000, body},
		{"at the bound", 1100, body},
		{"cut at a line's end", 25, "0123456789\n0123456789\n"},
		{"no line's end within it", 5, "01234"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RunCapped(context.Background(), dir, tt.limit, "show", "HEAD:big.txt")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Text)
			assert.Equal(t, int64(len(body)), got.Size)
			assert.Equal(t, len(tt.want) < len(body), got.Cut())
		})
	}
	_, err := RunCapped(context.Background(), dir, 10, "show", "HEAD:nosuch.txt")
	var gitErr *Error
	require.ErrorAs(t, err, &gitErr)
	assert.Contains(t, gitErr.Output, "nosuch.txt")
}
