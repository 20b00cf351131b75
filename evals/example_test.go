package evals

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
)

var updateExample = flag.Bool("update-example", false, "capture examples/scripted-ab again against the scripted server")

// exampleDir is the committed example workspace whose record CI verifies.
const exampleDir = "../examples/scripted-ab"

// exampleModel names arm L's model in the example: the scripted server answers, not a model, and
// the name says so wherever the record is read.
const exampleModel = "scripted-not-a-model"

// exampleKey signs the example record and routing. It is derived from a public string, so anyone
// can sign with it: only the example workspace trusts it, which is the point of an example.
func exampleKey() ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("locum examples/scripted-ab: a public example key, trusted by nothing else"))
	return ed25519.NewKeyFromSeed(seed[:])
}

// TestRegenerateExample captures examples/scripted-ab again: k = 5 turns per task and arm, arm L
// against the scripted server answering every task with the known-good answer, arm H a scripted
// host doing the same, then the signed routing and the workspace trusting the example key. Run
// it with: go test ./evals -run TestRegenerateExample -update-example. It is needed whenever a
// task's prompt, fixture or predicate changes (the old record then fails --verify) or the
// record's format does.
func TestRegenerateExample(t *testing.T) {
	if !*updateExample {
		t.Skip("regenerates the example only with -update-example")
	}
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("lmstudio"))
	var replies []scripted.Reply
	for _, task := range Tasks() {
		for range EarnK {
			replies = append(replies, scripted.Reply{Answer: goodAnswer(t, task.ID)})
		}
	}
	srv.On("POST", "/v1/chat/completions", replies...)

	bin := t.TempDir()
	good, err := filepath.Abs(filepath.Join("testdata", "good"))
	require.NoError(t, err)
	host := "#!/bin/sh\n# A scripted host: it answers each task with the known-good answer.\n" +
		"if [ \"$2\" = --version ]; then echo scripted-host 1.0; exit 0; fi\n" +
		"for last; do :; done\n" +
		"case \"$last\" in\n  *\"package store\"*) cat " + good + "/code.md ;;\n  *\"review notes\"*) cat " + good + "/codify.md ;;\n" +
		"  *\"package shapes\"*) cat " + good + "/agent.md ;;\n  *) cat " + good + "/handoff.md ;;\nesac\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "scripted-host-not-an-agent"), []byte(host), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	root := t.TempDir()
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	settings, err := c.Resolve("eval", nil, map[string]string{"base-url": srv.BaseURL()})
	require.NoError(t, err)
	key := exampleKey()
	rec, err := Capture(context.Background(), CaptureOptions{
		Name: "local-worker", K: EarnK, Seed: 42, Host: HostCommand{Argv: []string{"scripted-host-not-an-agent", "-p"}},
		HostModel: "scripted-host-not-a-model", Models: map[string]string{"code": exampleModel, "prose": exampleModel, "agent": exampleModel},
		Root: root, Roles: c.Roles(), Key: key, Version: "go-test", BinarySHA: "none: captured by go test, not by a locum binary",
		Local: engine.RunSpec{Settings: settings, JournalPath: filepath.Join(t.TempDir(), "run.jsonl")},
	})
	require.NoError(t, err)
	require.NoError(t, WriteRouting(root, rec.Name, DeriveRoles(rec, c.Roles()), func(doc map[string]any) error { return Sign(doc, key) }))
	ws, err := json.MarshalIndent(map[string]any{
		"packs": []string{"tools/local-llm"},
		"trust": map[string]any{"keys": []string{FormatPublicKey(key.Public().(ed25519.PublicKey))}},
	}, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, packs.WorkspaceFile), append(ws, '\n'), 0o644))

	for _, rel := range []string{packs.WorkspaceFile, RoutingFile, ".locum/evals/ab/local-worker.json", ".locum/evals/ab/local-worker.md"} {
		data, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		dst := filepath.Join(exampleDir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
	}
	spec, err := os.ReadFile(specNote)
	require.NoError(t, err)
	register, err := os.ReadFile(filepath.Join(exampleDir, ".locum/evals/ab/local-worker.md"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(specNote, []byte(specWithRegister(t, string(spec), string(register))), 0o644))
}

// specNote shows the example's register in full.
const specNote = "../spec/ab-record.md"

// specMarker ends the text of spec/ab-record.md; the example register, indented, follows it.
const specMarker = "captured against locum's scripted test server (no model took part):\n\n"

func specWithRegister(t *testing.T, spec, register string) string {
	t.Helper()
	i := strings.Index(spec, specMarker)
	require.GreaterOrEqual(t, i, 0, "spec/ab-record.md lost its marker")
	var b strings.Builder
	b.WriteString(spec[:i+len(specMarker)])
	for _, line := range strings.Split(strings.TrimSuffix(register, "\n"), "\n") {
		if line != "" {
			b.WriteString("    " + line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// The register spec/ab-record.md shows is the example's, byte for byte, so the format the spec
// documents is the one locum renders.
func TestSpecShowsTheExampleRegister(t *testing.T) {
	spec, err := os.ReadFile(specNote)
	require.NoError(t, err)
	register, err := os.ReadFile(filepath.Join(exampleDir, ".locum/evals/ab/local-worker.md"))
	require.NoError(t, err)
	require.Equal(t, specWithRegister(t, string(spec), string(register)), string(spec),
		"regenerate with: go test ./evals -run TestRegenerateExample -update-example")
}
