package packs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/schema"
)

func write(t *testing.T, file, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(content), 0o644))
}

func TestBuiltinPackIsComplete(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	p, err := ValidateBuiltin(v, DefaultPack)
	require.NoError(t, err)
	assert.Equal(t, []string{"tools/local-llm"}, BuiltinRefs())
	for _, m := range Modes {
		assert.Contains(t, p.Contributes.Modes, m)
	}
	assert.Equal(t, "code", modeValue(p.Contributes.Modes["transform"]["role"]))
	assert.Equal(t, "prose", modeValue(p.Contributes.Modes["summarize"]["role"]))
	assert.Equal(t, []string{"code"}, p.Contributes.Roles["code"].Tasks)
	assert.Equal(t, []string{"codify", "handoff"}, p.Contributes.Roles["prose"].Tasks)
	require.Len(t, p.Contributes.Gates, 1)
	assert.Equal(t, "propose", p.Contributes.Gates[0].Tier)
	assert.Equal(t, "none", p.Contributes.Gates[0].ActionKind())
	persona, err := os.ReadFile(filepath.Join("tools", "local-llm", "personas", "local-worker.md"))
	require.NoError(t, err)
	for _, section := range []string{"## Charter", "## Autonomy reach", "## Read / write posture", "## Memory scope"} {
		assert.Contains(t, string(persona), section)
	}
}

func TestFindRoot(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "repo", ".git", "HEAD"), "x")
	write(t, filepath.Join(dir, "repo", "a", "b", "f"), "x")
	root, err := FindRoot(filepath.Join(dir, "repo", "a", "b"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "repo"), root)

	write(t, filepath.Join(dir, "plain", ".locum", "workspace.json"), "{}")
	write(t, filepath.Join(dir, "plain", "x", "f"), "x")
	root, err = FindRoot(filepath.Join(dir, "plain", "x"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "plain"), root)
}

func TestComposeRefusals(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	cases := []struct {
		name, ws, want string
	}{
		{"unknown pack", `{"packs":["tools/local-llm","tools/x"]}`, `/packs/1: unknown pack "tools/x"`},
		{"shadowed id", `{"packs":["tools/local-llm"],"verify":[{"id":"runner-rails","run":"true"}]}`, `/verify/0/id: recipe id "runner-rails" is already declared by tools/local-llm`},
		{"schema", `{"packs":"tools/local-llm"}`, `/packs: got string, want array`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, WorkspaceFile), tc.ws)
			_, err := Compose(v, root)
			var inv *schema.InvalidError
			require.True(t, errors.As(err, &inv), "got %v", err)
			assert.Contains(t, inv.Error(), ".locum/workspace.json: "+tc.want)
		})
	}
}

func TestComposeExpandsPackRoot(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	root := t.TempDir()
	write(t, filepath.Join(root, WorkspaceFile), `{"packs":["tools/local-llm","stacks/go"]}`)
	write(t, filepath.Join(root, ".locum/packs/stacks/go/pack.json"),
		`{"portulan":{"pack":"1.0"},"name":"go","category":"stacks","contributes":{"verify":[{"id":"vet","run":"bash ${PACK_ROOT}/vet.sh"}]}}`)
	c, err := Compose(v, root)
	require.NoError(t, err)
	r, ok := c.Find("stacks/go:vet")
	require.True(t, ok)
	assert.Equal(t, "bash "+filepath.Join(root, ".locum/packs/stacks/go")+"/vet.sh", r.Run)
	assert.False(t, r.NeedsPackRoot())
	r, ok = c.Find("runner-rails")
	require.True(t, ok)
	assert.Equal(t, "tools/local-llm:runner-rails", r.Name)
}

func TestMaterializeBuiltin(t *testing.T) {
	p, err := LoadBuiltin(DefaultPack)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, p.Materialize(dir))
	assert.FileExists(t, filepath.Join(dir, "pack.json"))
	assert.FileExists(t, filepath.Join(dir, "skills", "delegate-local", "SKILL.md"))
	r := Recipe{Run: "bash ${PACK_ROOT}/x.sh"}
	assert.Equal(t, "bash '/a b'/x.sh", r.WithPackRoot("/a b"))
}

// testWorker is a worker as init would be given one.
var testWorker = Worker{Tools: []string{"status", "transform"}, Model: "haiku", MaxTurns: 20}

func TestInitIsIdempotentAndGuardsUserFiles(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	root := t.TempDir()
	acts, err := Init(v, root, false, testWorker)
	require.NoError(t, err)
	assert.Equal(t, "created", acts[0].Action)
	assert.Equal(t, "created", acts[1].Action)
	acts, err = Init(v, root, false, testWorker)
	require.NoError(t, err)
	assert.Equal(t, "kept", acts[0].Action)
	assert.Equal(t, "unchanged", acts[1].Action)

	skill := filepath.Join(root, SkillInstallPath)
	write(t, skill, "---\nname: mine\n")
	_, err = Init(v, root, false, testWorker)
	var changed *ChangedFileError
	require.True(t, errors.As(err, &changed))
	assert.Equal(t, 2, changed.Line)
	assert.ErrorIs(t, err, ErrRefused)
	data, _ := os.ReadFile(skill)
	assert.Equal(t, "---\nname: mine\n", string(data))

	acts, err = Init(v, root, true, testWorker)
	require.NoError(t, err)
	assert.Equal(t, "overwritten", acts[1].Action)
}
