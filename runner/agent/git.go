package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// gitTimeout bounds one git command; none of them should take long, and a stuck one must not
// hold the run (or its cleanup) forever.
const gitTimeout = 2 * time.Minute

// GitError is a git command that failed.
type GitError struct {
	Args   []string
	Output string
	Err    error
}

func (e *GitError) Error() string {
	out := strings.TrimSpace(e.Output)
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.Err, out)
}

func (e *GitError) Unwrap() error { return e.Err }

// safeConfig switches off what a repository's config could make git run beside the command
// asked for: hooks, the fsmonitor, signing, automatic housekeeping. (Every diff locum asks for
// passes --no-ext-diff --no-textconv, so no diff driver runs either.)
var safeConfig = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false", "-c", "log.showSignature=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false"}

// driverKey is a config key naming a program git runs for a file an attribute hands to the
// driver: a filter's clean, smudge or process, or a merge driver.
var driverKey = regexp.MustCompile(`^(filter|merge)\..+\.(clean|smudge|process|driver)$`)

// Git runs git in dir with nothing the repository's config names run beside it: hooks, the
// fsmonitor and signing are switched off, every filter the config declares is emptied (a file
// goes in and out as it is), and every merge driver is /bin/false's (the merge of such a file is
// a conflict, reported, never a program of the repository's choosing).
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	neutral, err := emptyDrivers(ctx, dir)
	if err != nil {
		return "", err
	}
	return run(ctx, dir, append(append(slices.Clone(safeConfig), neutral...), args...), args)
}

// emptyDrivers lists the -c settings that neutralise every driver dir's config declares. An
// emptied filter is also not required, so git keeps the file as it is rather than fail.
func emptyDrivers(ctx context.Context, dir string) ([]string, error) {
	out, err := run(ctx, dir, append(slices.Clone(safeConfig), "config", "--null", "--name-only", "--get-regexp", `^(filter|merge)\.`), nil)
	var ge *GitError
	if errors.As(err, &ge) {
		var exit *exec.ExitError
		if errors.As(ge.Err, &exit) && exit.ExitCode() == 1 {
			return nil, nil // no such key
		}
	}
	if err != nil {
		return nil, err
	}
	var set []string
	for _, key := range strings.Split(out, "\x00") {
		key = strings.TrimSpace(key)
		if !driverKey.MatchString(key) {
			continue
		}
		if strings.HasPrefix(key, "merge.") {
			set = append(set, "-c", key+"=false")
			continue
		}
		set = append(set, "-c", key+"=", "-c", key[:strings.LastIndex(key, ".")]+".required=false")
	}
	return set, nil
}

func run(ctx context.Context, dir string, full, args []string) (string, error) {
	if args == nil {
		args = full
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), &GitError{Args: args, Output: out.String(), Err: err}
	}
	return out.String(), nil
}

// gitEnv is the environment without the variables that point git at another repository, index or
// work tree (set when locum runs inside a git hook): every command here names its own directory.
func gitEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// runIDPattern is the shape of a run id (engine.NewRunID). A branch name is made from it, so an
// id read back from a journal's file name is checked against it first.
var runIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// ValidRunID reports whether id has the shape of a run id.
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) }

// BranchPrefix starts the name of every agent branch.
const BranchPrefix = "locum/agent/"

// Branch is the branch of run id.
func Branch(id string) string { return BranchPrefix + id }

var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// ValidSHA reports whether s is a full commit id.
func ValidSHA(s string) bool { return shaPattern.MatchString(s) }

// identity fills in a committer for a repository that has none configured, so a run on a fresh
// machine can still commit its work; a configured identity is left alone.
func identity(ctx context.Context, dir string) []string {
	if out, err := Git(ctx, dir, "config", "user.email"); err == nil && strings.TrimSpace(out) != "" {
		return nil
	}
	return []string{"-c", "user.name=locum agent", "-c", "user.email=locum@localhost"}
}

// RemoveWorktree removes the worktree at path (if it is still there) and prunes git's record of it.
func RemoveWorktree(ctx context.Context, root, path string) error {
	if _, err := os.Lstat(path); err == nil {
		if _, err := Git(ctx, root, "worktree", "remove", "--force", path); err != nil {
			// A worktree git no longer knows is a plain folder of locum's.
			if rerr := os.RemoveAll(path); rerr != nil {
				return err
			}
		}
	}
	_, err := Git(ctx, root, "worktree", "prune")
	return err
}

// DeleteBranch deletes a branch if it exists.
func DeleteBranch(ctx context.Context, root, branch string) error {
	if _, err := Git(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		return nil
	}
	_, err := Git(ctx, root, "branch", "-D", branch)
	return err
}

// Identity is the committer to give git in dir: none where the repository has one configured,
// else locum's own, so a commit on a fresh machine still goes through.
func Identity(ctx context.Context, dir string) []string { return identity(ctx, dir) }
