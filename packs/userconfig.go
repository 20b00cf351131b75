package packs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// UserConfig is the operator's config.json, as spec/config.schema.json describes it. It lives
// outside every repository, so it may say what no repository file may: leave loopback, name a
// signing key, accept a model for a role.
type UserConfig struct {
	// File is where it was read from.
	File     string `json:"-"`
	Endpoint struct {
		BaseURL     string `json:"base_url,omitempty"`
		AllowRemote *bool  `json:"allow_remote,omitempty"`
	} `json:"endpoint"`
	// Verify is how the verify command is contained.
	Verify struct {
		Network *bool    `json:"network,omitempty"`
		Home    *bool    `json:"home,omitempty"`
		Sandbox string   `json:"sandbox,omitempty"`
		Caches  []string `json:"caches,omitempty"`
	} `json:"verify"`
	// Host is what the operator lets locum read of the host's own files.
	Host struct {
		// Transcripts is the folder of the host's session transcripts; ~/ is the home
		// directory.
		Transcripts string `json:"transcripts,omitempty"`
	} `json:"host"`
	SigningKey string                  `json:"signing_key,omitempty"`
	TrustKeys  []string                `json:"trust_keys,omitempty"`
	Roles      map[string]AcceptedRole `json:"roles,omitempty"`
	// signingPub is the public half of SigningKey, read when the config was loaded.
	signingPub string
}

// AcceptedRole is a model the operator accepts for a role before any A/B record earned one.
// locum roles accept writes the time and the screen it ran; a hand-written entry may have only
// the model.
type AcceptedRole struct {
	Model      string `json:"model"`
	Effort     string `json:"effort,omitempty"`
	AcceptedAt string `json:"accepted_at,omitempty"`
	// Weights is the server's identity of the model's weights when it was accepted (Ollama's
	// digest, llama-server's file, type, parameters and size, vLLM's root); "" where it gave none.
	Weights string        `json:"weights,omitempty"`
	Screen  *AcceptScreen `json:"screen,omitempty"`
	// Bench is the bench the operator accepted the model from (locum roles accept --from-bench),
	// in place of a screen.
	Bench *AcceptBench `json:"bench,omitempty"`
}

// AcceptBench is what a bench measured of the model accepted: the bench's run, its tasks, and the
// model's row of its table. A figure the servers did not report is left out.
type AcceptBench struct {
	Run     string `json:"run"`
	Tasks   int    `json:"tasks"`
	Cells   int    `json:"cells"`
	Kept    int    `json:"kept"`
	Fixed   int    `json:"fixed"`
	Held    int    `json:"held"`
	Red     int    `json:"red"`
	Refused int    `json:"refused"`
	Errors  int    `json:"errors"`
	Right   int    `json:"right"`
	Judged  int    `json:"judged"`
	// WallP50Ms and WallP90Ms are the wall times of its cells; TTFTms and Rate the medians of the
	// servers' time to first token and decode rate (tokens a second).
	WallP50Ms *int64   `json:"wall_p50_ms,omitempty"`
	WallP90Ms *int64   `json:"wall_p90_ms,omitempty"`
	TTFTms    *int64   `json:"ttft_ms,omitempty"`
	Rate      *float64 `json:"rate,omitempty"`
	InTokens  *int64   `json:"in_tokens,omitempty"`
	OutTokens *int64   `json:"out_tokens,omitempty"`
	// SavedUSD is what the host would have saved delegating the bench's tasks to the model, by
	// the ledger's cost model.
	SavedUSD *float64 `json:"saved_usd,omitempty"`
}

// AcceptScreen is what the screen before an acceptance showed: the role's tasks the model passed
// and failed, or that the operator skipped it.
type AcceptScreen struct {
	Skipped bool     `json:"skipped,omitempty"`
	Passed  []string `json:"passed,omitempty"`
	Failed  []string `json:"failed,omitempty"`
}

// UserDirs are the operator's own directories: the config, state and cache directories of
// locum, from XDG_CONFIG_HOME, XDG_STATE_HOME and XDG_CACHE_HOME, else under the home directory.
type UserDirs struct {
	Config string
	State  string
	Cache  string
	home   string
}

// FindUserDirs locates the operator's directories. It fails only when neither the XDG variable
// nor a home directory is known.
func FindUserDirs(env Lookup) (UserDirs, error) {
	if env == nil {
		env = os.LookupEnv
	}
	dir := func(xdg, under string) (string, error) {
		if v, ok := env(xdg); ok && filepath.IsAbs(v) {
			return filepath.Join(v, "locum"), nil
		}
		home, ok := env("HOME")
		if !ok || home == "" {
			return "", fmt.Errorf("neither %s nor HOME is set: locum has nowhere to keep the operator's files", xdg)
		}
		return filepath.Join(home, under, "locum"), nil
	}
	var d UserDirs
	var err error
	d.home, _ = env("HOME")
	if d.Config, err = dir("XDG_CONFIG_HOME", ".config"); err != nil {
		return d, err
	}
	if d.State, err = dir("XDG_STATE_HOME", filepath.Join(".local", "state")); err != nil {
		return d, err
	}
	if d.Cache, err = dir("XDG_CACHE_HOME", ".cache"); err != nil {
		return d, err
	}
	return d, nil
}

// UserConfigFile is the user config's path in dirs.
func (d UserDirs) UserConfigFile() string { return filepath.Join(d.Config, "config.json") }

// LoadUserConfig reads the operator's config.json. A missing file is (nil, nil). It is the
// operator's, but it is still read with a ceiling and refused with a key named twice: a mistake
// there should fail loudly, not widen a rail by accident.
func LoadUserConfig(v *schema.Validator, dirs UserDirs) (*UserConfig, error) {
	file := dirs.UserConfigFile()
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	data, err := untrusted.ReadFile(file, untrusted.ConfigCap)
	if err != nil {
		return nil, fmt.Errorf("user config: %w", err)
	}
	if _, err := v.Validate(schema.Config, file, data); err != nil {
		return nil, err
	}
	cfg := &UserConfig{File: file}
	if err := schema.DecodeInto(file, data, cfg); err != nil {
		return nil, err
	}
	// The operator's own signing key signs the routing they capture: its public half (the .pub
	// that locum eval keygen wrote beside it) is trusted without saying so twice.
	if key := cfg.SigningKeyPath(func(k string) (string, bool) { return dirs.home, dirs.home != "" && k == "HOME" }); key != "" {
		if pub, err := untrusted.ReadFile(key+".pub", 4096); err == nil {
			cfg.signingPub = strings.TrimSpace(string(pub))
		}
	}
	return cfg, nil
}

// OperatorKeys are the public keys the operator trusts to sign routing: the user config's
// trust_keys and the public half of its signing key. A repository's workspace adds none.
func (c *Composition) OperatorKeys() []string {
	if c.User == nil {
		return nil
	}
	keys := append([]string(nil), c.User.TrustKeys...)
	if c.User.signingPub != "" {
		keys = append(keys, c.User.signingPub)
	}
	return keys
}

// SigningKeyPath is the configured signing key with a leading ~/ expanded; "" when none.
func (c *UserConfig) SigningKeyPath(env Lookup) string {
	if c == nil || c.SigningKey == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(c.SigningKey, "~/"); ok {
		if home, ok := env("HOME"); ok && home != "" {
			return filepath.Join(home, rest)
		}
	}
	return c.SigningKey
}

// source names the user config in a setting's source.
func (c *UserConfig) source() string { return "user config " + c.File }

// AcceptedRole is the model the operator accepted for role in the user config, if any.
func (c *Composition) AcceptedRole(role string) (AcceptedRole, bool) {
	if c.User == nil {
		return AcceptedRole{}, false
	}
	r, ok := c.User.Roles[role]
	return r, ok && r.Model != ""
}
