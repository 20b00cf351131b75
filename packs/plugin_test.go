package packs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fields Claude Code documents, which the files of the plugin are held to: a field it does
// not know is one the plugin should not write. Each list is the documentation's, as of the page
// named beside it.
var (
	// https://code.claude.com/docs/en/plugins-reference#plugin-manifest-schema
	manifestFields = []string{"$schema", "name", "displayName", "version", "description", "author", "homepage",
		"repository", "license", "keywords", "metadata", "defaultEnabled", "skills", "commands", "agents",
		"workflows", "hooks", "mcpServers", "outputStyles", "lspServers", "experimental", "userConfig",
		"channels", "dependencies"}
	// https://code.claude.com/docs/en/plugin-marketplaces#marketplace-schema
	marketplaceFields = []string{"$schema", "name", "owner", "plugins", "description", "version", "metadata",
		"allowCrossMarketplaceDependenciesOn", "renames"}
	// https://code.claude.com/docs/en/plugin-marketplaces#plugin-entries: a manifest's fields and
	// these.
	marketplaceEntryFields = append(slices.Clone(manifestFields), "source", "category", "tags", "strict", "relevance")
	// https://code.claude.com/docs/en/plugins-reference#agents: hooks, mcpServers and
	// permissionMode are not supported in a plugin's agent.
	pluginAgentFields = []string{"name", "description", "model", "effort", "maxTurns", "tools", "disallowedTools",
		"skills", "memory", "background", "isolation"}
	// https://code.claude.com/docs/en/plugin-marketplaces#required-fields
	reservedMarketplaces = []string{"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
		"claude-plugins-community", "claude-community", "anthropic-marketplace", "anthropic-plugins", "agent-skills",
		"anthropic-agent-skills", "knowledge-work-plugins", "life-sciences", "claude-for-legal",
		"claude-for-financial-services", "financial-services-plugins", "first-party-plugins", "healthcare"}
	// A plugin's and a marketplace's name: kebab-case, no spaces.
	kebab = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// jsonKeys are the keys of a JSON object.
func jsonKeys(t *testing.T, data []byte) []string {
	t.Helper()
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &obj))
	var keys []string
	for k := range obj {
		keys = append(keys, k)
	}
	return keys
}

// frontMatter reads a Markdown file's front matter as Claude Code's agents and skills write it:
// key: value lines, a list as the indented "- item" lines under its key.
func frontMatter(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	text, ok := strings.CutPrefix(string(data), "---\n")
	require.True(t, ok, "no front matter")
	head, _, ok := strings.Cut(text, "\n---\n")
	require.True(t, ok, "front matter not closed")
	out := map[string][]string{}
	var last string
	sc := bufio.NewScanner(strings.NewReader(head))
	for sc.Scan() {
		if item, ok := strings.CutPrefix(sc.Text(), "  - "); ok {
			require.NotEmpty(t, last, "a list item under no key")
			out[last] = append(out[last], item)
			continue
		}
		key, value, ok := strings.Cut(sc.Text(), ":")
		require.True(t, ok, "front matter line %q", sc.Text())
		require.NotContains(t, out, key, "%s given twice", key)
		out[key] = nil
		if value = strings.TrimSpace(value); value != "" {
			out[key] = []string{value}
		}
		last = key
	}
	return out
}

func TestInitPluginWritesOnePluginOfClaudeCodesShape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugin")
	worker := Worker{Tools: []string{"status", "transform", "ledger"}, Model: "haiku", MaxTurns: 20}
	acts, err := InitPlugin(dir, false, worker, "v1.4.0")
	require.NoError(t, err)
	var written []string
	for _, a := range acts {
		assert.Equal(t, "created", a.Action, a.File)
		written = append(written, a.File)
	}
	in := func(rel string) string { return filepath.ToSlash(filepath.Join(dir, rel)) }
	assert.ElementsMatch(t, []string{in(PluginManifestPath), in(PluginMarketplacePath), in(PluginSkillPath),
		in(PluginWorkerPath), in(PluginServersPath)}, written)
	read := func(rel string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		return data
	}

	// The manifest: documented fields only, a kebab-case name, a semantic version.
	manifest := read(PluginManifestPath)
	for _, k := range jsonKeys(t, manifest) {
		assert.Contains(t, manifestFields, k, "plugin.json: Claude Code documents no field %s", k)
	}
	var m struct{ Name, Version, Description string }
	require.NoError(t, json.Unmarshal(manifest, &m))
	assert.Equal(t, PluginName, m.Name)
	assert.Regexp(t, kebab, m.Name)
	assert.Regexp(t, semver, m.Version)
	assert.True(t, strings.HasPrefix(m.Version, "1.4.0-"), "the version starts with locum's: %s", m.Version)
	assert.NotEmpty(t, m.Description)
	// Only the manifest and the marketplace go in .claude-plugin/; every component at the root.
	meta, err := os.ReadDir(filepath.Join(dir, ".claude-plugin"))
	require.NoError(t, err)
	var metaNames []string
	for _, e := range meta {
		metaNames = append(metaNames, e.Name())
	}
	assert.ElementsMatch(t, []string{"plugin.json", "marketplace.json"}, metaNames)

	// The marketplace: one entry, the plugin, whose source is the marketplace's own directory.
	market := read(PluginMarketplacePath)
	for _, k := range jsonKeys(t, market) {
		assert.Contains(t, marketplaceFields, k, "marketplace.json: Claude Code documents no field %s", k)
	}
	var mk struct {
		Name  string
		Owner struct{ Name string }
		// Plugins are kept raw so each entry's keys are checked too.
		Plugins []json.RawMessage
	}
	require.NoError(t, json.Unmarshal(market, &mk))
	assert.Regexp(t, kebab, mk.Name)
	assert.NotContains(t, reservedMarketplaces, mk.Name)
	assert.NotEmpty(t, mk.Owner.Name, "owner.name is required")
	require.Len(t, mk.Plugins, 1)
	for _, k := range jsonKeys(t, mk.Plugins[0]) {
		assert.Contains(t, marketplaceEntryFields, k, "marketplace.json: a plugin entry has no field %s", k)
	}
	var entry struct{ Name, Source string }
	require.NoError(t, json.Unmarshal(mk.Plugins[0], &entry))
	assert.Equal(t, m.Name, entry.Name, "the entry names the plugin")
	assert.Equal(t, "./", entry.Source, "a relative source, the marketplace's root: the plugin's directory")

	// The server: locum mcp on PATH, in the project Claude Code opened.
	var servers struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(read(PluginServersPath), &servers))
	require.Contains(t, servers.MCPServers, ServerName)
	srv := servers.MCPServers[ServerName]
	assert.Equal(t, "locum", srv.Command)
	assert.Equal(t, []string{"mcp", "--dir", "${CLAUDE_PROJECT_DIR}"}, srv.Args)

	// The worker: a plugin agent's fields only, the plugin's tool names, the plugin's skill.
	agent := frontMatter(t, read(PluginWorkerPath))
	for k := range agent {
		assert.Contains(t, pluginAgentFields, k, "a plugin's agent does not take %s", k)
	}
	assert.Equal(t, []string{"mcp__plugin_locum_locum__status, mcp__plugin_locum_locum__transform, mcp__plugin_locum_locum__ledger"}, agent["tools"])
	assert.Equal(t, []string{"locum:delegate-local"}, agent["skills"])
	assert.Equal(t, []string{"haiku"}, agent["model"])

	// The skill, as the pack ships it, under its own name.
	skill, err := fs.ReadFile(builtinFS, builtinSkill)
	require.NoError(t, err)
	assert.Equal(t, string(skill), string(read(PluginSkillPath)))
	assert.Equal(t, []string{WorkerSkill}, frontMatter(t, skill)["name"])
}

// TestPluginNamesAreClaudeCodes holds the worker's names to Claude Code's rule for a plugin's:
// mcp__plugin_PLUGIN_SERVER__TOOL with every character outside A-Z, a-z, 0-9, _ and - replaced by
// _, and PLUGIN:SKILL.
func TestPluginNamesAreClaudeCodes(t *testing.T) {
	scoped := func(s string) string {
		return regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(s, "_")
	}
	assert.Equal(t, "mcp__plugin_"+scoped(PluginName)+"_"+scoped(ServerName)+"__", PluginNames.ToolPrefix)
	assert.Equal(t, PluginName+":"+WorkerSkill, PluginNames.Skill)
	assert.Equal(t, "mcp__"+ServerName+"__", ProjectNames.ToolPrefix)
	assert.Regexp(t, kebab, PluginName, "a plugin's name is kebab-case")
}

func TestInitPluginKeepsAPersonsFilesAndIsAllOrNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugin")
	in := func(rel string) string { return filepath.Join(dir, rel) }
	actions := func(acts []InitAction) map[string]string {
		out := map[string]string{}
		for _, a := range acts {
			rel, err := filepath.Rel(dir, filepath.FromSlash(a.File))
			require.NoError(t, err)
			out[filepath.ToSlash(rel)] = a.Action
		}
		return out
	}
	read := func(rel string) string {
		data, err := os.ReadFile(in(rel))
		require.NoError(t, err)
		return string(data)
	}
	_, err := InitPlugin(dir, false, testWorker, "v1.0.0")
	require.NoError(t, err)
	first := read(PluginManifestPath)

	// Run again, it changes nothing.
	acts, err := InitPlugin(dir, false, testWorker, "v1.0.0")
	require.NoError(t, err)
	for file, action := range actions(acts) {
		assert.Equal(t, "unchanged", action, file)
	}

	// A worker of the person's own is kept, and the manifest takes a new version for it, since
	// Claude Code takes a plugin's files again only under a new version.
	mine := "---\nname: local-worker\ndescription: mine\n---\nMine.\n"
	write(t, in(PluginWorkerPath), mine)
	sonnet := testWorker
	sonnet.Model = "sonnet"
	acts, err = InitPlugin(dir, false, sonnet, "v1.0.0")
	require.NoError(t, err)
	got := actions(acts)
	assert.Equal(t, "kept", got[PluginWorkerPath])
	assert.Equal(t, "updated", got[PluginManifestPath])
	assert.Equal(t, mine, read(PluginWorkerPath))
	assert.NotEqual(t, first, read(PluginManifestPath))
	acts, err = InitPlugin(dir, false, sonnet, "v1.0.0")
	require.NoError(t, err)
	assert.Equal(t, "unchanged", actions(acts)[PluginManifestPath], "the same files, the same version")

	// A skill the person changed refuses the run, naming the file and the command that replaces
	// it, and nothing is written.
	write(t, in(PluginSkillPath), "---\nname: mine\n---\n")
	before := read(PluginManifestPath)
	_, err = InitPlugin(dir, false, testWorker, "v2.0.0")
	require.ErrorIs(t, err, ErrRefused)
	var changed *ChangedFileError
	require.ErrorAs(t, err, &changed)
	assert.Equal(t, filepath.ToSlash(in(PluginSkillPath)), changed.File)
	assert.Equal(t, "locum init --plugin "+dir+" --force", changed.Force)
	assert.Equal(t, "---\nname: mine\n---\n", read(PluginSkillPath))
	assert.Equal(t, mine, read(PluginWorkerPath))
	assert.Equal(t, before, read(PluginManifestPath))

	// --force replaces every file.
	acts, err = InitPlugin(dir, true, testWorker, "v1.0.0")
	require.NoError(t, err)
	got = actions(acts)
	assert.Equal(t, "overwritten", got[PluginSkillPath])
	assert.Equal(t, "overwritten", got[PluginWorkerPath])
	assert.Equal(t, first, read(PluginManifestPath), "the same files as the first run, the same version")

	// A manifest of the person's own, not locum's at another version, is theirs: refused.
	own := `{"name": "mine", "version": "1.0.0"}` + "\n"
	write(t, in(PluginManifestPath), own)
	_, err = InitPlugin(dir, false, testWorker, "v1.0.0")
	require.ErrorIs(t, err, ErrRefused)
	assert.Equal(t, own, read(PluginManifestPath))
}

func TestInitPluginRefusesAFileAsItsDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plugin")
	write(t, file, "mine\n")
	_, err := InitPlugin(file, false, testWorker, "v1.0.0")
	var notDir *PluginDirError
	require.ErrorAs(t, err, &notDir)
	assert.Contains(t, err.Error(), "is a file, not a directory: name a directory")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(data))
}

func TestInitPluginConfinesItsFiles(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "agents")))
	_, err := InitPlugin(dir, true, testWorker, "v1.0.0")
	require.Error(t, err, "a link in the plugin's directory must not aim a write elsewhere")
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries)
}

func TestPluginVersion(t *testing.T) {
	parts := []plannedPart{{rel: "a", final: []byte("one")}, {rel: "b", final: []byte("two")}}
	for _, tc := range []struct{ locum, core string }{
		{"v1.2.3", "1.2.3"},
		{"devel", "0.0.0"},
		{"v1.2.3+incompatible", "1.2.3"},
		{"v0.0.0-20260101120000-abcdef123456", "0.0.0-20260101120000-abcdef123456"},
		{"v1.2", "0.0.0"},
	} {
		v := pluginVersion(tc.locum, parts)
		assert.Regexp(t, `^`+regexp.QuoteMeta(tc.core)+`-[0-9a-f]{12}$`, v, tc.locum)
		assert.Regexp(t, semver, v, tc.locum)
	}
	same := pluginVersion("v1.2.3", slices.Clone(parts))
	assert.Equal(t, pluginVersion("v1.2.3", parts), same, "the same files, the same version")
	for name, other := range map[string][]plannedPart{
		"a file's content": {{rel: "a", final: []byte("one")}, {rel: "b", final: []byte("three")}},
		"a file's name":    {{rel: "a", final: []byte("one")}, {rel: "c", final: []byte("two")}},
		"bytes moved":      {{rel: "a", final: []byte("onet")}, {rel: "b", final: []byte("wo")}},
	} {
		assert.NotEqual(t, same, pluginVersion("v1.2.3", other), name)
	}
}

func TestHostConfigsStartLocumMCP(t *testing.T) {
	// The repository's .mcp.json is the file earlier inits wrote, byte for byte, so a repository
	// set up before is unchanged.
	assert.Equal(t, "{\n  \"mcpServers\": {\n    \"locum\": {\n      \"command\": \"locum\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}\n", string(hostConfig))
	runs, err := runsLocumMCP(hostConfig)
	require.NoError(t, err)
	assert.True(t, runs)
	// The plugin's starts the same command in the project Claude Code opened.
	plugin := mcpConfig(pluginServerArgs)
	assert.True(t, bytes.Contains(plugin, []byte(`"args": ["mcp", "--dir", "${CLAUDE_PROJECT_DIR}"]`)), string(plugin))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(plugin, &doc))
}
