package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/untrusted"
)

// Verify runs the verify command in dir, the tree it judges, contained as the operator's
// settings say: a sandbox where only dir (every git directory in it read-only), the scratch HOME
// and TMPDIR and the repository's own caches are writable, the network off unless
// verify_network, and a refusal when sandbox require finds none. How it was contained goes on
// the receipt, and why no sandbox was in force, where the operator did not choose none, in the
// journal. A command that could not start is a *NoVerdictError; a sandbox required and missing,
// a *rails.NoSandboxError; a tree locum cannot read to its end before the verify, which does not
// run, a *rails.UnreadableTreeError or *rails.TreeTooLargeError; a verify that may have left a
// git directory where git would obey it, a *rails.PlantedGitError.
func (r *Run) Verify(ctx context.Context, command, dir string) (rails.ShellResult, error) {
	s := r.Spec.Settings
	repo := r.Spec.Root
	if repo == "" {
		repo = dir
	}
	vr, err := rails.RunShell(ctx, rails.ShellCommand{Command: command, Dir: dir, Timeout: s.Duration(packs.VerifyTimeout), TailBytes: 4096, Sandbox: VerifySandbox(s, repo, dir)})
	if vr.Sandbox != "" {
		r.sandbox = vr.Sandbox
	}
	if vr.SandboxWhy != "" && !r.sandboxWhy {
		r.sandboxWhy = true
		r.Emit(SandboxEvent{Sandbox: vr.Sandbox, Why: vr.SandboxWhy})
	}
	var noSandbox *rails.NoSandboxError
	var planted *rails.PlantedGitError
	var unreadable *rails.UnreadableTreeError
	var tooLarge *rails.TreeTooLargeError
	if err != nil && !errors.As(err, &noSandbox) && !errors.As(err, &planted) && !errors.As(err, &unreadable) && !errors.As(err, &tooLarge) {
		err = &NoVerdictError{Command: command, Verdict: err.Error()}
	}
	return vr, err
}

// VerifySandbox is the sandbox a verify in dir, a tree of the repository at repo (the repository
// itself, or a worktree of it), runs in under s. The repository's verify caches are its own, and
// locum's state, cache and config directories are out of the verify's sight: the state holds the
// operator's keys, the cache every other repository's verify caches, the config the operator's
// settings and, where docs/concepts.md suggests, the key that signs routing. That key is hidden
// wherever the user config (or LOCUM_SIGNING_KEY) puts it: with it a repository could sign the
// routing that earns its model a role.
func VerifySandbox(s *packs.Settings, repo, dir string) *rails.Sandbox {
	mode := s.String(packs.SandboxSetting)
	sb := &rails.Sandbox{Writable: []string{dir}, Network: s.Bool(packs.VerifyNetwork), KeepHome: s.Bool(packs.VerifyHome),
		Require: mode == "require", Off: mode == "none"}
	if dirs, err := packs.FindUserDirs(nil); err == nil {
		sb.Hidden = []string{dirs.State, dirs.Cache, dirs.Config}
		if caches, err := rails.RepoCacheDir(dirs.Cache, repo); err == nil {
			sb.GoCaches = caches
		}
		if key := signingKeyFile(dirs); key != "" {
			sb.HiddenFiles = append(sb.HiddenFiles, key)
		}
	}
	if key, ok := os.LookupEnv("LOCUM_SIGNING_KEY"); ok && key != "" {
		sb.HiddenFiles = append(sb.HiddenFiles, key)
	}
	for _, c := range strings.Split(s.String(packs.VerifyCaches), string(os.PathListSeparator)) {
		if c = strings.TrimSpace(c); c != "" {
			sb.Caches = append(sb.Caches, c)
		}
	}
	return sb
}

// signingKeyFile is the signing_key the user config names, "" where none. The config is read as
// loosely as it is the operator's own file: a config that fails its checks stops locum
// elsewhere, and here it only decides what else to hide.
func signingKeyFile(dirs packs.UserDirs) string {
	data, err := untrusted.ReadFile(dirs.UserConfigFile(), untrusted.ConfigCap)
	if err != nil {
		return ""
	}
	var cfg struct {
		SigningKey string `json:"signing_key"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	return (&packs.UserConfig{SigningKey: cfg.SigningKey}).SigningKeyPath(os.LookupEnv)
}
