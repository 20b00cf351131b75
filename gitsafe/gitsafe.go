// Package gitsafe runs git on a repository locum does not trust. A repository's own config (its
// .git/config, and a worktree's config.worktree) may name programs git runs beside the command
// asked for; Run runs none of them, whatever the command, and refuses a repository whose config
// it cannot read through. It imports nothing of locum's but untrusted, so every package that runs
// git (the agent, workflows, the A/B capture) can go through it. For the same packages it says
// where in a repository's git directory locum may write (GitPath, WorktreeDir: place.go) and
// holds the git commands the modes that leave a branch share (worktree.go).
//
// What git 2.39 reads from config and runs, and what stops it here:
//
//   - hooks (core.hooksPath), the fsmonitor (core.fsmonitor), signing and signature checks
//     (commit.gpgSign, tag.gpgSign, log.showSignature, merge.verifySignatures, gpg.*.program),
//     and automatic housekeeping (gc.auto, maintenance.auto): switched off for every command;
//   - every transport and what it runs (core.sshCommand, core.gitProxy, remote.*.uploadpack,
//     remote.*.receivepack, remote helpers named by a URL or remote.*.vcs, credential helpers,
//     core.askPass): GIT_ALLOW_PROTOCOL lists no protocol, and git checks it before any config
//     (a repository's protocol.<name>.allow outranks protocol.allow, never the environment);
//     GIT_NO_LAZY_FETCH makes an object a partial clone lacks an error instead of a fetch; and
//     each of those keys the repository sets is given a harmless value too;
//   - a filter's clean, smudge or process, a merge driver: each the repository declares is
//     emptied or /bin/false;
//   - an external diff or a textconv: every diff passes --no-ext-diff --no-textconv;
//   - submodules (whose config is not read here): submodule.recurse is off, and status and diff
//     never look inside a submodule's work tree, which would start git there;
//   - an editor or a pager: GIT_EDITOR is ":" (git then runs none), and output is never a
//     terminal, so git starts no pager.
//
// Config that reads other files depending on the worktree or branch (include, includeIf) or moves
// the work tree (core.worktree) is refused: what git would run there is not known here.
package gitsafe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/untrusted"
)

// Timeout bounds one git command; none of them should take long, and a stuck one must not hold
// a run (or its clean-up) forever.
const Timeout = 2 * time.Minute

// Error is a git command that failed.
type Error struct {
	Args   []string
	Output string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.Err, tail(e.Output))
}

func (e *Error) Unwrap() error { return e.Err }

func tail(out string) string {
	out = strings.TrimSpace(out)
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return out
}

// ConfigError is a repository whose own git config sets Key, under which locum runs no git
// command: a refusal.
type ConfigError struct{ Key string }

func (e *ConfigError) Error() string {
	return fmt.Sprintf("the repository's git config sets %s, which makes git read other config or work on another tree, depending on the worktree and branch, so locum cannot tell what git would run there; remove it (git config --unset), or run locum in a clone without it", untrusted.Escape(e.Key))
}

// MissingObjectsError is a command that needed an object a partial clone lacks. git would fetch
// it from the repository's remote, running what the repository's config names for that; locum
// fetches nothing: a refusal. It is not an *Error, so no caller takes it for a conflict.
type MissingObjectsError struct {
	Args   []string
	Output string
}

func (e *MissingObjectsError) Error() string {
	return fmt.Sprintf("the repository is a partial clone that lacks objects this command needs (git %s), and locum fetches none: a fetch runs what the repository's git config names for its remote (an ssh command, an upload-pack, a proxy, a remote helper) with your rights. Fetch them yourself where you trust that config (git fetch, or a checkout of the commit), or run locum in a full clone. git said: %s",
		untrusted.Escape(strings.Join(e.Args, " ")), untrusted.Escape(tail(e.Output)))
}

// lazyFetchRefused is what git prints (in the C locale) when GIT_NO_LAZY_FETCH stops a fetch of
// a missing object.
const lazyFetchRefused = "lazy fetching disabled"

// noProtocol is the one protocol GIT_ALLOW_PROTOCOL allows: no transport has that name (a URL's
// scheme holds no "_"), and each remote.*.vcs the repository sets is overridden with another.
const noProtocol = "locum_allows_none"

// override is a config setting locum gives a git command. It goes in the environment
// (GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n), which takes a key as it is: a -c argument would split a
// driver's name at its first "=". It is the command scope, which outranks every file's.
type override struct{ key, value string }

// safeConfig is given to every command: see the package comment. credential.helper's empty value
// clears the list of helpers every file named.
var safeConfig = []override{
	{"core.hooksPath", "/dev/null"}, {"core.fsmonitor", "false"},
	{"commit.gpgSign", "false"}, {"tag.gpgSign", "false"}, {"log.showSignature", "false"}, {"merge.verifySignatures", "false"},
	{"gpg.program", "false"}, {"gpg.openpgp.program", "false"}, {"gpg.x509.program", "false"}, {"gpg.ssh.program", "false"},
	{"gpg.ssh.defaultKeyCommand", "false"},
	{"gc.auto", "0"}, {"maintenance.auto", "false"},
	{"protocol.allow", "never"}, {"core.sshCommand", "false"}, {"credential.helper", ""}, {"core.askPass", ""},
	{"submodule.recurse", "false"}, {"status.submoduleSummary", "false"},
}

// safeEnv is set for every command. GIT_PROXY_COMMAND's empty value outranks every core.gitProxy.
var safeEnv = []string{
	"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_ALLOW_PROTOCOL=" + noProtocol, "GIT_NO_LAZY_FETCH=1",
	"GIT_PROXY_COMMAND=", "GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:",
	// The C locale, so that git's messages read as lazyFetchRefused is written.
	"LC_ALL=C",
}

// repoKey is a key of the repository's config that names a program, or allows a transport, by a
// name of the repository's choosing; neutral gives each its harmless value.
var repoKey = regexp.MustCompile(`^(?:(filter)\..+\.(clean|smudge|process)|(merge)\..+\.(driver)|(protocol)\..+\.(allow)|(remote)\..+\.(uploadpack|receivepack|vcs))$`)

// neutral is what a key repoKey matches is set to: empty for a filter (a file goes in and out as
// it is, and the filter is no longer required), false for a merge driver (a conflict, reported),
// never for a transport, git's own programs for a remote, and for a remote helper a name no
// protocol GIT_ALLOW_PROTOCOL allows.
func neutral(key string) []override {
	m := repoKey.FindStringSubmatch(strings.ToLower(key))
	if m == nil {
		return nil
	}
	switch {
	case m[1] == "filter":
		return []override{{key, ""}, {key[:strings.LastIndex(key, ".")] + ".required", "false"}}
	case m[3] == "merge":
		return []override{{key, "false"}}
	case m[5] == "protocol":
		return []override{{key, "never"}}
	}
	switch m[8] {
	case "uploadpack":
		return []override{{key, "git-upload-pack"}}
	case "receivepack":
		return []override{{key, "git-receive-pack"}}
	}
	return []override{{key, "none"}}
}

// injected are the flags every command of a subcommand gets, before the caller's (so a caller may
// still ask for --ignore-submodules=all): a diff runs no external diff or textconv, and neither
// a diff nor a status looks inside a submodule's work tree, where git would run the submodule's
// own config.
var injected = map[string][]string{
	"diff":   {"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"},
	"status": {"--ignore-submodules=dirty"},
}

// Run runs git in dir with nothing the repository's config names run beside it (see the package
// comment), and returns what it printed, standard output and error together. A failed command is
// an *Error; a repository whose config locum cannot run git under is a *ConfigError, and an
// object a partial clone lacks a *MissingObjectsError.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	neutral, err := repoOverrides(ctx, dir)
	if err != nil {
		return "", err
	}
	return run(ctx, dir, append(slices.Clone(safeConfig), neutral...), inject(args))
}

// Capped is what a command printed on standard output, cut at a bound: Text its first bytes,
// Size all of them.
type Capped struct {
	Text string
	Size int64
}

// Cut says the output was longer than Text.
func (c Capped) Cut() bool { return c.Size > int64(len(c.Text)) }

// errorBytes bounds what RunCapped keeps of a command's standard error: enough for any message
// git prints about a failure.
const errorBytes = 64 << 10

// RunCapped is Run for a command whose output may be large (a diff of a branch someone else
// could have committed to): what it keeps of standard output is at most limit bytes, cut at the
// end of a line where one ends within them, and of standard error, which a failure reports, at
// most errorBytes. git still runs to the end, under Timeout, so Size counts all it printed.
func RunCapped(ctx context.Context, dir string, limit int, args ...string) (Capped, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	neutral, err := repoOverrides(ctx, dir)
	if err != nil {
		return Capped{}, err
	}
	stdout, stderr := &capWriter{limit: limit}, &capWriter{limit: errorBytes}
	err = start(ctx, dir, append(slices.Clone(safeConfig), neutral...), inject(args), stdout, stderr)
	text := stdout.buf.Bytes()
	if stdout.size > int64(len(text)) {
		if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		}
	}
	return Capped{Text: string(text), Size: stdout.size}, failure(args, stderr.buf.String(), err)
}

// capWriter keeps the first limit bytes written to it and counts them all.
type capWriter struct {
	buf   bytes.Buffer
	limit int
	size  int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.size += int64(len(p))
	if room := w.limit - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// inject puts a subcommand's injected flags right after its name, past any -c NAME=VALUE before
// it.
func inject(args []string) []string {
	i := 0
	for i+1 < len(args) && args[i] == "-c" {
		i += 2
	}
	if i >= len(args) {
		return args
	}
	flags, ok := injected[args[i]]
	if !ok {
		return args
	}
	return slices.Concat(args[:i+1], flags, args[i+1:])
}

// repoOverrides reads the config git sees in dir, includes not followed, and neutralises what
// the repository's own config (its local and worktree scopes) names; the operator's (system,
// global, command line) is left as it is. An include is refused, since what the included file
// declares can differ by worktree and branch and is not read here.
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
			return nil, &ConfigError{Key: key}
		}
		set = append(set, neutral(key)...)
	}
	return set, nil
}

func run(ctx context.Context, dir string, set []override, args []string) (string, error) {
	var out bytes.Buffer
	err := start(ctx, dir, set, args, &out, &out)
	return out.String(), failure(args, out.String(), err)
}

// start runs git with args in dir under the overrides set, its output to stdout and stderr.
func start(ctx context.Context, dir string, set []override, args []string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(env(), safeEnv...), "GIT_CONFIG_COUNT="+strconv.Itoa(len(set)))
	for i, o := range set {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, o.key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, o.value))
	}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	return cmd.Run()
}

// failure is the error of a command that ended with err, having printed out: nil for none, a
// *MissingObjectsError for a fetch GIT_NO_LAZY_FETCH stopped, else an *Error.
func failure(args []string, out string, err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(out, lazyFetchRefused):
		return &MissingObjectsError{Args: args, Output: out}
	}
	return &Error{Args: args, Output: out, Err: err}
}

// env is the environment without what would point git at another repository, index or work tree
// (set when locum runs inside a git hook), or carry config or settings of the caller's that Run
// sets itself.
func env() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GIT_DIR", k == "GIT_WORK_TREE", k == "GIT_INDEX_FILE", k == "GIT_OBJECT_DIRECTORY", k == "GIT_COMMON_DIR", k == "GIT_NAMESPACE", k == "GIT_PREFIX":
			continue
		case k == "GIT_CONFIG_COUNT", strings.HasPrefix(k, "GIT_CONFIG_KEY_"), strings.HasPrefix(k, "GIT_CONFIG_VALUE_"):
			continue // locum's own overrides take these
		case k == "GIT_CONFIG_PARAMETERS":
			continue // a calling git's -c, read after GIT_CONFIG_KEY_n: it would outrank safeConfig
		}
		for _, s := range safeEnv {
			if name, _, _ := strings.Cut(s, "="); k == name {
				k = ""
				break
			}
		}
		if k != "" {
			out = append(out, kv)
		}
	}
	return out
}

// Complete refuses, as a *MissingObjectsError, commits whose trees hold an object the repository
// lacks (as a partial clone may): a merge or a checkout that needs one fails part-way, with some
// files of the work tree already changed, where this check changes nothing.
func Complete(ctx context.Context, dir string, commits ...string) error {
	args := append([]string{"rev-list", "--objects", "--no-walk", "--missing=print", "--end-of-options"}, commits...)
	out, err := Run(ctx, dir, args...)
	if err != nil {
		return err
	}
	var missing []string
	for line := range strings.SplitSeq(out, "\n") {
		if oid, ok := strings.CutPrefix(line, "?"); ok {
			missing = append(missing, oid)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &MissingObjectsError{Args: args, Output: fmt.Sprintf("%d objects missing, the first %s", len(missing), missing[0])}
}
