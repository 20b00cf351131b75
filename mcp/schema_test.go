package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// Each tool that runs a mode takes, beside its own arguments, every setting of the mode a call
// may set, by its flag in snake_case, typed and worded from the settings' declaration; no
// setting only the operator sets.
func TestToolSettingsComeFromTheirDeclaration(t *testing.T) {
	f := newFixture(t, false)
	list, err := f.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	props := map[string]map[string]any{}
	for _, tool := range list.Tools {
		data, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var schema struct {
			Properties           map[string]any `json:"properties"`
			AdditionalProperties *bool          `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(data, &schema))
		require.NotNil(t, schema.AdditionalProperties, tool.Name)
		assert.False(t, *schema.AdditionalProperties, "%s takes no argument it does not declare", tool.Name)
		props[tool.Name] = schema.Properties
	}
	for _, name := range engine.RegisteredModes() {
		m, _ := engine.LookupMode(name)
		if m.Tool == nil {
			continue
		}
		for _, f := range packs.SettingFlags(name) {
			arg := strings.ReplaceAll(f.Name, "-", "_")
			_, taken := props[m.ToolName()][arg]
			// The endpoint, a request's deadline and the input budget, which every mode takes,
			// are a call's only where its mode asks a model.
			want := !f.OperatorOnly && (m.Model != engine.NoModel || perModeSetting(f.Key))
			assert.Equal(t, want, taken, "tool %s, setting %s", m.ToolName(), f.Key)
		}
	}
	for _, tc := range []struct {
		tool, arg string
		want      map[string]any
	}{
		{"transform", "max_attempts", map[string]any{"type": "integer", "description": "1 to 20"}},
		{"transform", "effort", map[string]any{"type": "string", "description": "none, low, medium or high"}},
		{"transform", "edit_guard", map[string]any{"type": "string", "description": "span, signature or comments"}},
		{"transform", "expect_red", map[string]any{"type": "boolean"}},
		{"transform", "first_token_timeout", map[string]any{"type": "string", "description": "such as 2m; 0 for none"}},
		{"transform", "file", map[string]any{"type": "string"}},
		{"dedup", "threshold", map[string]any{"type": "number", "description": "-1 to 1"}},
		{"dedup", "model", map[string]any{"type": "string"}},
		{"verify_check", "verify_timeout", map[string]any{"type": "string", "description": "such as 10m"}},
		{"run", "jobs", map[string]any{"type": "integer", "description": "1 to 64"}},
		{"status", "base_url", map[string]any{"type": "string"}},
	} {
		assert.Equal(t, tc.want, props[tc.tool][tc.arg], "%s's %s", tc.tool, tc.arg)
	}
	for tool, p := range props {
		for _, k := range []string{"allow_remote", "mutants", "sandbox", "verify_network", "delegate_when", "servers", "cache_max_mib"} {
			assert.NotContains(t, p, k, "%s: only the operator sets %s", tool, k)
		}
	}
	assert.NotContains(t, props["verify_check"], "base_url", "a mode that asks no model takes no endpoint")
}

func perModeSetting(key string) bool {
	for _, k := range packs.PerModeSettings() {
		if k.String() == key {
			return true
		}
	}
	return false
}

// A call's settings reach the job layer as a flag's text would, keyed by setting.
func TestCallArgsAreTheSettingsText(t *testing.T) {
	m, ok := engine.LookupMode("transform")
	require.True(t, ok)
	got := callArgs(callSettings(m), engine.ToolArgs{"max_attempts": 2.0, "expect_red": true, "effort": "none", "file": "a.go", "mutants": 9.0})
	assert.Equal(t, map[string]string{"max_attempts": "2", "expect_red": "true", "effort": "none"}, got)
}
