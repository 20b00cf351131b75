package packs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/schema"
)

func TestAcceptAndRevokeRole(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	accepted := AcceptedRole{Model: "qwen3-coder:30b", AcceptedAt: "2026-12-01T10:00:00Z", Screen: &AcceptScreen{Failed: []string{"code"}}}
	cases := []struct {
		name    string
		before  string // the user config before; "" for none, "fifo" for a named pipe
		wantErr string // "" when the acceptance is written
	}{
		{"no config yet", "", ""},
		{"other keys kept", `{"endpoint": {"base_url": "http://127.0.0.1:11434/v1"}, "trust_keys": ["ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], "roles": {"prose": {"model": "p"}}}`, ""},
		{"a key named twice is refused", `{"roles": {}, "roles": {}}`, "duplicate key"},
		{"a config that does not fit the schema is refused", `{"endpoint": {"base_url": 7}}`, "/endpoint/base_url"},
		{"a named pipe is refused", "fifo", "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dirs := UserDirs{Config: filepath.Join(t.TempDir(), "locum")}
			file := dirs.UserConfigFile()
			require.NoError(t, os.MkdirAll(dirs.Config, 0o700))
			switch tc.before {
			case "":
			case "fifo":
				require.NoError(t, syscall.Mkfifo(file, 0o600))
			default:
				require.NoError(t, os.WriteFile(file, []byte(tc.before), 0o600))
			}
			err := AcceptRole(v, dirs, "code", accepted)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				if tc.before != "fifo" {
					data, _ := os.ReadFile(file)
					assert.Equal(t, tc.before, string(data), "a refused edit writes nothing")
				}
				return
			}
			require.NoError(t, err)
			st, err := os.Stat(file)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			cfg, err := LoadUserConfig(v, dirs)
			require.NoError(t, err)
			assert.Equal(t, accepted, cfg.Roles["code"])
			if tc.before != "" {
				assert.Equal(t, "http://127.0.0.1:11434/v1", cfg.Endpoint.BaseURL)
				assert.Equal(t, []string{"ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}, cfg.TrustKeys)
				assert.Equal(t, "p", cfg.Roles["prose"].Model)
			}
			require.NoError(t, RevokeRole(v, dirs, "code"))
			cfg, err = LoadUserConfig(v, dirs)
			require.NoError(t, err)
			_, ok := cfg.Roles["code"]
			assert.False(t, ok)
			assert.ErrorIs(t, RevokeRole(v, dirs, "code"), ErrNotAccepted)
		})
	}
}

// SetEndpoint writes endpoint.base_url and keeps every other key, of endpoint and of the file.
func TestSetEndpoint(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	cases := []struct {
		name, before string
		want         map[string]any
	}{
		{"no config yet", "", map[string]any{"endpoint": map[string]any{"base_url": "http://127.0.0.1:11434/v1"}}},
		{"other keys kept", `{"endpoint": {"base_url": "http://127.0.0.1:1234/v1", "allow_remote": false}, "roles": {"code": {"model": "m"}}}`,
			map[string]any{"endpoint": map[string]any{"base_url": "http://127.0.0.1:11434/v1", "allow_remote": false}, "roles": map[string]any{"code": map[string]any{"model": "m"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dirs := UserDirs{Config: filepath.Join(t.TempDir(), "locum")}
			if tc.before != "" {
				require.NoError(t, os.MkdirAll(dirs.Config, 0o700))
				require.NoError(t, os.WriteFile(dirs.UserConfigFile(), []byte(tc.before), 0o600))
			}
			require.NoError(t, SetEndpoint(v, dirs, "http://127.0.0.1:11434/v1"))
			data, err := os.ReadFile(dirs.UserConfigFile())
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(data, &got))
			assert.Equal(t, tc.want, got)
			info, err := os.Stat(dirs.UserConfigFile())
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		})
	}
}
