package packs

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The host's transcripts are the operator's to name: the user config, the environment or a
// flag. A workspace, a pack or a tool call cannot, and no run's settings (so no journal) hold it.
func TestHostTranscriptsOnlyTheOperators(t *testing.T) {
	user := &UserConfig{File: "/home/op/.config/locum/config.json"}
	user.Host.Transcripts = "~/.claude/projects"
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"HOME": "/home/op", "LOCUM_HOST_TRANSCRIPTS": "/srv/claude"}[k]
		return v, ok
	}
	tests := []struct {
		name   string
		user   *UserConfig
		env    Lookup
		flags  map[string]string
		args   map[string]string
		value  string
		source string
	}{
		{"unset", nil, nil, nil, nil, "", "default"},
		{"the user config", user, nil, nil, nil, "~/.claude/projects", "user config /home/op/.config/locum/config.json"},
		{"the environment", user, env, nil, nil, "/srv/claude", "env LOCUM_HOST_TRANSCRIPTS"},
		{"a flag", user, env, map[string]string{"host-transcripts": "/mnt/t"}, nil, "/mnt/t", "flag --host-transcripts"},
		{"a tool call's argument is not taken", nil, nil, nil, map[string]string{"host_transcripts": "/"}, "", "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := builtinComposition(t)
			c.User = tt.user
			// A workspace naming it, as an override of any mode, is never read for it.
			c.Workspace = &Workspace{Overrides: map[string]map[string]json.RawMessage{
				"transform": {"host_transcripts": json.RawMessage(`"/etc"`)}, LedgerSettings: {"host_transcripts": json.RawMessage(`"/etc"`)}}}
			s, err := c.ResolveCall("", tt.env, tt.flags, tt.args)
			require.NoError(t, err)
			got, ok := s.Get(HostTranscripts)
			require.True(t, ok)
			assert.Equal(t, tt.value, got.Value)
			assert.Equal(t, tt.source, got.Source)
		})
	}
	for _, mode := range Modes {
		s, err := builtinComposition(t).Resolve(mode, nil, nil)
		if err != nil {
			continue
		}
		_, ok := s.Get(HostTranscripts)
		assert.False(t, ok, "a %s run resolves the host's transcripts", mode)
	}
	// A workspace or pack that names it is invalid: no mode of theirs takes it.
	assert.NotEmpty(t, modeProblems("ws", "/overrides", map[string]map[string]json.RawMessage{LedgerSettings: {"host_transcripts": json.RawMessage(`"/"`)}}))
}

func TestTranscriptsFolder(t *testing.T) {
	env := func(k string) (string, bool) { return "/home/op", k == "HOME" }
	wd, err := filepath.Abs(".")
	require.NoError(t, err)
	for _, tt := range []struct{ value, want string }{
		{"", ""},
		{"~/.claude/projects", "/home/op/.claude/projects"},
		{"/srv/claude/", "/srv/claude"},
		{"transcripts", filepath.Join(wd, "transcripts")},
	} {
		s := &Settings{items: []Setting{{Key: HostTranscripts.String(), Value: tt.value}}}
		assert.Equal(t, tt.want, TranscriptsFolder(s, env), tt.value)
	}
	assert.Contains(t, LedgerFlags(), FlagSpec{Name: "host-transcripts", Key: "host_transcripts", Env: "LOCUM_HOST_TRANSCRIPTS", Doc: LedgerFlags()[0].Doc, OperatorOnly: true, Group: GroupHost})
	var serve []string
	for _, f := range ServeFlags() {
		serve = append(serve, f.Name)
	}
	assert.Contains(t, serve, "host-transcripts", "the operator of locum mcp names it by flag too")
	for _, f := range SettingFlags("") {
		assert.NotEqual(t, "host-transcripts", f.Name, "no command but the ledger's takes it")
	}
}
