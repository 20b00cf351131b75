package packs

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func builtinComposition(t *testing.T) *Composition {
	t.Helper()
	p, err := LoadBuiltin(DefaultPack)
	require.NoError(t, err)
	return &Composition{Packs: []*Pack{p}}
}

func TestResolveOrder(t *testing.T) {
	c := builtinComposition(t)
	later := &Pack{Ref: "tools/later", Manifest: Manifest{Contributes: Contributes{Modes: map[string]map[string]json.RawMessage{
		"transform": {"max_attempts": json.RawMessage(`5`), "edit_format": json.RawMessage(`"blocks"`)},
	}}}}
	c.Packs = append(c.Packs, later)
	c.Workspace = &Workspace{Overrides: map[string]map[string]json.RawMessage{"transform": {"max_attempts": json.RawMessage(`4`), "effort": json.RawMessage(`"none"`)}}}
	c.Workspace.Endpoint.BaseURL = "http://localhost:11434/v1"
	env := map[string]string{"LOCUM_EFFORT": "medium", "LOCUM_BASE_URL": "http://127.0.0.1:8080/v1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	flags := map[string]string{"base-url": "http://[::1]:1234/v1"}

	s, err := c.Resolve("transform", lookup, flags)
	require.NoError(t, err)
	cases := []struct {
		key           Key
		value, source string
	}{
		{Timeout, "10m", "default"},
		{MaxInputBytes, "32768", "pack tools/local-llm"},
		{EditFormat, "blocks", "pack tools/later"},
		{MaxAttempts, "4", "workspace .locum/workspace.json"},
		{Effort, "medium", "env LOCUM_EFFORT"},
		{BaseURL, "http://[::1]:1234/v1", "flag --base-url"},
		{RoleSetting, "code", "pack tools/local-llm"},
	}
	for _, tc := range cases {
		got, ok := s.Get(tc.key)
		require.True(t, ok, tc.key.String())
		assert.Equal(t, tc.value, got.Value, tc.key.String())
		assert.Equal(t, tc.source, got.Source, tc.key.String())
	}
	assert.Equal(t, int64(4), s.Int(MaxAttempts))
	_, ok := s.Get(Threshold)
	assert.False(t, ok, "a dedup setting must not appear in transform")
}

// A tool call's arguments come after the operator's flags and say they are the call's; a flag,
// an argument and the environment set it for the run, the rest do not. A call may lower a
// budget, never raise it.
func TestResolveCall(t *testing.T) {
	c := builtinComposition(t)
	flags := map[string]string{"max-input-bytes": "1000", "timeout": "5m"}
	args := map[string]string{"max_input_bytes": "500", "embed_model": "nomic"}
	s, err := c.ResolveCall("dedup", nil, flags, args)
	require.NoError(t, err)
	cases := []struct {
		key           Key
		value, source string
		setForRun     bool
	}{
		{MaxInputBytes, "500", "argument max_input_bytes", true},
		{EmbedModel, "nomic", "argument model", true},
		{Timeout, "5m", "flag --timeout", true},
		{Glob, "*.md", "pack tools/local-llm", false},
		{Threshold, "", "default", false},
	}
	for _, tc := range cases {
		got, ok := s.Get(tc.key)
		require.True(t, ok, tc.key.String())
		assert.Equal(t, tc.value, got.Value, tc.key.String())
		assert.Equal(t, tc.source, got.Source, tc.key.String())
		assert.Equal(t, tc.setForRun, got.SetForRun(), tc.key.String())
	}
	_, err = c.ResolveCall("dedup", nil, nil, map[string]string{"threshold": "9"})
	assert.ErrorContains(t, err, "argument threshold")

	for _, tc := range []struct {
		name  string
		flags map[string]string
		args  map[string]string
		want  string
	}{
		{"a budget over the operator's flag", map[string]string{"max-input-bytes": "1000"}, map[string]string{"max_input_bytes": "100000000"}, "at most 1000, this run's (the operator's max-input-bytes flag): a tool call may lower it, never raise it"},
		{"output tokens over the pack's default", nil, map[string]string{"max_output_tokens": "8192"}, "at most 4096, this run's (pack tools/local-llm)"},
		{"a longer request deadline", nil, map[string]string{"timeout": "11m"}, "at most 10m, this run's (default)"},
		{"a longer verify deadline", map[string]string{"verify-timeout": "1m"}, map[string]string{"verify_timeout": "90s"}, "at most 1m, this run's"},
		{"no first-token deadline where the operator set one", map[string]string{"first-token-timeout": "2m"}, map[string]string{"first_token_timeout": "0s"}, "at most 2m, this run's"},
		{"a longer first-token deadline", map[string]string{"first-token-timeout": "2m"}, map[string]string{"first_token_timeout": "3m"}, "at most 2m, this run's"},
		{"more attempts", nil, map[string]string{"max_attempts": "4"}, "at most 3, this run's (pack tools/local-llm)"},
		{"a wider edit guard", map[string]string{"edit-guard": "comments"}, map[string]string{"edit_guard": "span"}, "no wider than comments, this run's (the operator's edit-guard flag): a tool call may narrow it, never widen it"},
		{"bodies where only comments may change", map[string]string{"edit-guard": "comments"}, map[string]string{"edit_guard": "signature"}, "no wider than comments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ResolveCall("transform", nil, tc.flags, tc.args)
			require.Error(t, err, "a call widened a rail")
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "only the operator may raise it further (the ")
			assert.NotContains(t, err.Error(), "--", "the message serves a tool call as well as the command line")
		})
	}
	// Lowering is the call's to do, a first-token deadline included where none was set.
	for _, args := range []map[string]string{{"max_attempts": "1"}, {"timeout": "1m"}, {"first_token_timeout": "30s"}, {"max_input_bytes": "100"}, {"edit_guard": "comments"}, {"edit_guard": "signature"}} {
		_, err := c.ResolveCall("transform", nil, nil, args)
		assert.NoError(t, err, "%v narrows", args)
	}
}

func TestResolveRefusesBadValues(t *testing.T) {
	c := builtinComposition(t)
	cases := []struct {
		mode, flag, value, want string
	}{
		{"transform", "max-input-bytes", "32k", "a whole number"},
		{"transform", "max-input-bytes", "0", "at least 1"},
		{"transform", "max-input-bytes", "-5", "a whole number"},
		{"transform", "max-input-bytes", "1.5", "a whole number"},
		{"transform", "max-attempts", "21", "from 1 to 20"},
		{"transform", "effort", "xhigh", "one of none, low, medium, high"},
		{"transform", "edit-format", "diff", "one of span, blocks"},
		{"transform", "verify-timeout", "soon", "duration"},
		{"dedup", "threshold", "1.5", "from -1 to 1"},
		{"dedup", "threshold", "0.8x", "plain decimal"},
		{"dedup", "threshold", "1e-1", "plain decimal"},
		{"dedup", "threshold", "NaN", "plain decimal"},
		{"dedup", "threshold", "", "plain decimal"},
	}
	for _, tc := range cases {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			_, err := c.Resolve(tc.mode, nil, map[string]string{tc.flag: tc.value})
			var se *SettingError
			require.True(t, errors.As(err, &se), "got %v", err)
			assert.Contains(t, se.Error(), tc.want)
			assert.Contains(t, se.Error(), "flag --"+tc.flag)
		})
	}
	s, err := c.Resolve("dedup", nil, map[string]string{"threshold": "-1"})
	require.NoError(t, err)
	assert.Equal(t, -1.0, s.Float(Threshold))
}

func TestResolveUndeclaredMode(t *testing.T) {
	c := &Composition{}
	_, err := c.Resolve("transform", nil, nil)
	var me *ModeError
	require.True(t, errors.As(err, &me))
}

func TestCapProblems(t *testing.T) {
	raw := func(s string) map[string]map[string]json.RawMessage {
		var m map[string]map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(s), &m))
		return m
	}
	for _, tt := range []struct {
		name string
		ws   *Workspace
		pack *Pack
		want []string
	}{
		{"a workspace within the caps", &Workspace{Overrides: raw(`{"transform":{"max_input_bytes":262144,"max_output_tokens":"32768"}}`)}, nil, nil},
		{"a workspace past both", &Workspace{Overrides: raw(`{"summarize":{"max_output_tokens":"40000"},"transform":{"max_input_bytes":262145}}`)}, nil,
			[]string{"/overrides/summarize/max_output_tokens", "/overrides/transform/max_input_bytes"}},
		{"a repository's pack past one", nil, &Pack{Dir: "packs/x/y", Manifest: Manifest{Contributes: Contributes{Modes: raw(`{"dedup":{"max_input_bytes":300000}}`)}}},
			[]string{"/contributes/modes/dedup/max_input_bytes"}},
		{"a built-in pack is not the repository's", nil, &Pack{Manifest: Manifest{Contributes: Contributes{Modes: raw(`{"dedup":{"max_input_bytes":300000}}`)}}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range CapProblems("f.json", tt.ws, tt.pack) {
				got = append(got, p.Pointer)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSettingFlagLists(t *testing.T) {
	names := func(specs []FlagSpec) map[string]bool {
		out := map[string]bool{}
		for _, f := range specs {
			out[f.Name] = true
		}
		return out
	}
	tests := []struct {
		name     string
		specs    []FlagSpec
		has, not []string
	}{
		{"shared", SettingFlags(""), []string{"base-url", "allow-remote", "host-family"}, []string{"servers", "sandbox", "timeout", "jobs"}},
		{"workflow", SettingFlags("workflow"), []string{"servers", "jobs", "sandbox", "verify-timeout", "delegate-when", "host-context-tokens"}, []string{"cache-max-mib", "host-holds-span"}},
		// A tool call takes no operator-only setting, so a server lists them all, and no setting a
		// call may set for itself.
		{"serve", ServeFlags(), []string{"base-url", "allow-remote", "servers", "sandbox", "verify-network", "delegate-when", "cache-max-mib"}, []string{"timeout", "jobs", "max-input-bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(tt.specs)
			for _, n := range tt.has {
				assert.True(t, got[n], "lists --%s", n)
			}
			for _, n := range tt.not {
				assert.False(t, got[n], "does not list --%s", n)
			}
		})
	}
}

// Every setting stands in one group of help: among a command's own flags, or one of Groups; the
// groups a flag list gives are the table's.
func TestSettingGroups(t *testing.T) {
	for _, s := range keySpecs {
		if s.group != GroupCommand {
			assert.Contains(t, Groups, s.group, s.key.name)
		}
	}
	groupOf := map[string]Group{}
	for _, f := range AllFlags() {
		groupOf[f.Name] = f.Group
	}
	for flag, want := range map[string]Group{
		"timeout": GroupModel, "max-attempts": GroupModel, "verify-timeout": GroupVerify, "sandbox": GroupVerify,
		"base-url": GroupEndpoint, "servers": GroupEndpoint, "host-family": GroupHost, "delegate-when": GroupHost,
		"role": GroupCommand, "max-words": GroupCommand,
	} {
		assert.Equal(t, want, groupOf[flag], flag)
	}
}

// A flag says whether a file in the repository may set its setting, as Resolve takes it.
func TestFlagRepository(t *testing.T) {
	repo := map[string]bool{}
	for _, f := range AllFlags() {
		repo[f.Name] = f.Repository
	}
	assert.True(t, repo["max-input-bytes"])
	assert.True(t, repo["base-url"], "the workspace's endpoint")
	assert.False(t, repo["allow-remote"])
	assert.False(t, repo["sandbox"])
	assert.False(t, repo["host-turns-left"], "global: no pack or workspace sets it")
}

// A mode's built-in defaults are the default pack's values over the table's, as a run with
// nothing else composed resolves them.
func TestBuiltinDefaults(t *testing.T) {
	agent, err := BuiltinDefaults("agent")
	require.NoError(t, err)
	assert.Equal(t, "131072", agent[MaxInputBytes.String()], "the default pack's")
	assert.Equal(t, "agent", agent[RoleSetting.String()])
	assert.Equal(t, "10m", agent[Timeout.String()], "the table's")
	_, ok := agent[HostContextTokens.String()]
	assert.False(t, ok, "a setting with no value is left out")

	shared, err := BuiltinDefaults("")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:1234/v1", shared[BaseURL.String()])
	_, ok = shared[MaxAttempts.String()]
	assert.False(t, ok, "a mode's setting is no shared one")

	for _, mode := range Modes {
		_, err := BuiltinDefaults(mode)
		assert.NoError(t, err, mode)
	}
}
