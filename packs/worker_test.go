package packs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/schema"
)

func TestTheLocalWorkerPersonaHasTheSeedsFields(t *testing.T) {
	p, err := LocalWorker()
	require.NoError(t, err)
	assert.Equal(t, "local-worker", p.Name)
	assert.Equal(t, []string{"locum"}, p.Tools, "its tools are locum's, nothing that writes a file directly")
	assert.Equal(t, "low", p.Effort)
	assert.True(t, p.OmitClaudeMd)
	assert.Equal(t, "haiku", p.Model)
	assert.Positive(t, p.MaxTurns)
}

func TestParsePersonaRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"no front matter":    "# x\n",
		"unclosed":           "---\nname: a\ndescription: b\n",
		"a key twice":        "---\nname: a\nname: b\ndescription: c\n---\n",
		"an unknown field":   "---\nname: a\ndescription: b\ncolour: red\n---\n",
		"no description":     "---\nname: a\n---\n",
		"turns not a number": "---\nname: a\ndescription: b\nmaxTurns: many\n---\n",
		"tools not a list":   "---\nname: a\ndescription: b\ntools: locum\n---\n",
	} {
		_, err := ParsePersona([]byte(text))
		assert.Error(t, err, name)
	}
}

func TestWorkerFile(t *testing.T) {
	p, err := LocalWorker()
	require.NoError(t, err)
	data, err := WorkerFile(p, Worker{Tools: []string{"status", "transform", "ledger"}, Model: "haiku", MaxTurns: 12}, ProjectNames)
	require.NoError(t, err)
	text := string(data)
	head, prompt, ok := strings.Cut(strings.TrimPrefix(text, "---\n"), "\n---\n")
	require.True(t, ok)
	assert.Equal(t, []string{
		"name: local-worker",
		`description: "` + p.Description + `"`,
		"tools: mcp__locum__status, mcp__locum__transform, mcp__locum__ledger",
		"model: haiku",
		"maxTurns: 12",
		"skills:",
		"  - delegate-local",
	}, strings.Split(head, "\n"))
	assert.Contains(t, prompt, "## Charter")
	assert.Contains(t, prompt, "## Working through locum")
	assert.NotContains(t, prompt, "## Memory scope", "the prompt stays short: the host loads its own instructions too")
	assert.NotContains(t, prompt, "# Local worker\n")

	for name, w := range map[string]Worker{
		"no tools":                           {Model: "haiku", MaxTurns: 1},
		"no turns":                           {Tools: []string{"status"}, Model: "haiku"},
		"a model alias that is not one word": {Tools: []string{"status"}, Model: "haiku\nrole: x", MaxTurns: 1},
	} {
		_, err := WorkerFile(p, w, ProjectNames)
		assert.Error(t, err, name)
	}
}

func TestInitWritesTheWorkerOnceAndKeepsAPersonsOwn(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	root := t.TempDir()
	byFile := func(acts []InitAction) map[string]InitAction {
		out := map[string]InitAction{}
		for _, a := range acts {
			out[a.File] = a
		}
		return out
	}
	acts, err := Init(v, root, false, testWorker)
	require.NoError(t, err)
	assert.Equal(t, "created", byFile(acts)[WorkerInstallPath].Action)
	written, err := os.ReadFile(filepath.Join(root, WorkerInstallPath))
	require.NoError(t, err)

	acts, err = Init(v, root, false, testWorker)
	require.NoError(t, err)
	assert.Equal(t, "unchanged", byFile(acts)[WorkerInstallPath].Action)

	mine := "---\nname: local-worker\ndescription: mine\n---\nMy own.\n"
	write(t, filepath.Join(root, WorkerInstallPath), mine)
	acts, err = Init(v, root, false, testWorker)
	require.NoError(t, err, "a person's own worker does not stop init")
	got := byFile(acts)[WorkerInstallPath]
	assert.Equal(t, "kept", got.Action)
	assert.Contains(t, got.Note, "locum init --force replaces it")
	data, _ := os.ReadFile(filepath.Join(root, WorkerInstallPath))
	assert.Equal(t, mine, string(data))

	acts, err = Init(v, root, true, testWorker)
	require.NoError(t, err)
	assert.Equal(t, "overwritten", byFile(acts)[WorkerInstallPath].Action)
	data, _ = os.ReadFile(filepath.Join(root, WorkerInstallPath))
	assert.Equal(t, string(written), string(data))
}

func TestInitConfinesTheWorkerFile(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, ".claude")))
	_, err = Init(v, root, true, testWorker)
	require.Error(t, err, "a committed .claude link must not aim init's writes out of the repository")
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries)
}
