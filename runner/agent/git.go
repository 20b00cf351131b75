package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
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

// override is a config setting locum gives a git command. It goes in the environment
// (GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n), which takes a key as it is: a -c argument would split
// a driver's name at its first "=".
type override struct{ key, value string }

// safeConfig switches off what config could make git run beside the command asked for: hooks,
// the fsmonitor, signing, automatic housekeeping, any transport (a lazy fetch of a partial
// clone would run the repository's ssh command), and recursion into submodules, whose config
// is not read here. (Every diff locum asks for passes --no-ext-diff --no-textconv, so no diff
// driver runs either.)
var safeConfig = []override{{"core.hooksPath", "/dev/null"}, {"core.fsmonitor", "false"}, {"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"}, {"log.showSignature", "false"}, {"gc.auto", "0"}, {"maintenance.auto", "false"},
	{"protocol.allow", "never"}, {"submodule.recurse", "false"}}

// driverKey is a config key naming a program git runs for a file an attribute hands to the
// driver: a filter's clean, smudge or process, or a merge driver.
var driverKey = regexp.MustCompile(`^(filter|merge)\..+\.(clean|smudge|process|driver)$`)

// Git runs git in dir with nothing the repository's config names run beside it: safeConfig,
// and every filter the repository's own config declares emptied (a file goes in and out as it
// is) and every merge driver /bin/false (the merge of such a file is a conflict, reported). A
// repository whose config includes other files or moves the work tree is refused.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	neutral, err := repoOverrides(ctx, dir)
	if err != nil {
		return "", err
	}
	return run(ctx, dir, append(slices.Clone(safeConfig), neutral...), args)
}

// unsafeConfig refuses a repository whose own git config sets key: locum runs no git command
// under it.
func unsafeConfig(key string) error {
	return &engine.RefusalError{Reason: fmt.Sprintf("the repository's git config sets %s, which makes git read other config or work on another tree, depending on the worktree and branch, so locum cannot tell what git would run there; remove it (git config --unset), or run locum in a clone without it", untrusted.Escape(key))}
}

// repoOverrides reads the config git sees in dir, includes not followed, and neutralises the
// drivers the repository's own config (its local and worktree scopes) declares; the operator's
// (system, global, command line) are left as they are. An include is refused, since what the
// included file declares can differ by worktree and branch and is not read here.
func repoOverrides(ctx context.Context, dir string) ([]override, error) {
	out, err := run(ctx, dir, safeConfig, []string{"config", "--no-includes", "--show-scope", "--null", "--list"})
	if err != nil {
		return nil, err
	}
	fields := strings.Split(out, "\x00")
	var set []override
	for i := 0; i+1 < len(fields); i += 2 {
		scope := fields[i]
		key, _, _ := strings.Cut(fields[i+1], "\n")
		if scope != "local" && scope != "worktree" {
			continue
		}
		lower := strings.ToLower(key)
		if strings.HasPrefix(lower, "include.") || strings.HasPrefix(lower, "includeif.") || lower == "core.worktree" {
			return nil, unsafeConfig(key)
		}
		if !driverKey.MatchString(lower) {
			continue
		}
		if strings.HasPrefix(lower, "merge.") {
			set = append(set, override{key, "false"})
			continue
		}
		set = append(set, override{key, ""}, override{key[:strings.LastIndex(key, ".")] + ".required", "false"})
	}
	return set, nil
}

func run(ctx context.Context, dir string, set []override, args []string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_CONFIG_COUNT="+strconv.Itoa(len(set)))
	for i, o := range set {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, o.key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, o.value))
	}
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
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GIT_DIR", k == "GIT_WORK_TREE", k == "GIT_INDEX_FILE", k == "GIT_OBJECT_DIRECTORY", k == "GIT_COMMON_DIR", k == "GIT_NAMESPACE", k == "GIT_PREFIX":
			continue
		case k == "GIT_CONFIG_COUNT", strings.HasPrefix(k, "GIT_CONFIG_KEY_"), strings.HasPrefix(k, "GIT_CONFIG_VALUE_"):
			continue // locum's own overrides take these
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
