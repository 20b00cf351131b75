package evals

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
)

// captureSetup is a capture against a scripted server, with the built-in pack's eval settings
// and flags on top, and a scripted host that counts its turns in root/host-calls.
func captureSetup(t *testing.T, srv *scripted.Server, k int, flags map[string]string) CaptureOptions {
	t.Helper()
	root := t.TempDir()
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	all := map[string]string{"base-url": srv.BaseURL()}
	for f, v := range flags {
		all[f] = v
	}
	settings, err := c.Resolve("eval", nil, all)
	require.NoError(t, err)
	host := filepath.Join(root, "host.sh")
	require.NoError(t, os.WriteFile(host, []byte("#!/bin/sh\nif [ \"$2\" = --version ]; then echo host 1.0; exit 0; fi\necho turn >> "+root+"/host-calls\necho no\n"), 0o755))
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return CaptureOptions{
		Name: "local-worker", K: k, Seed: 42, Host: HostCommand{Argv: []string{host, "-p"}}, HostModel: "scripted-host",
		Models: map[string]string{"code": "scripted-not-a-model", "prose": "scripted-not-a-model", "agent": "scripted-not-a-model"}, TurnTimeout: 0,
		Root: root, Roles: c.Roles(), Key: key, Version: "test", BinarySHA: "test",
		Local: engine.RunSpec{Settings: settings, JournalPath: filepath.Join(root, "run.jsonl")},
	}
}

func goodAnswer(t *testing.T, task string) *string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "good", task+".md"))
	require.NoError(t, err)
	s := string(data)
	return &s
}

func journalEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		out = append(out, ev)
	}
	return out
}

// Arm L is asked as every mode asks: streamed, at the effort and output cap the settings resolve
// (a flag's effort here, not a hard-coded one), with a seed per turn, journalled as a run, and
// every reply classified; a reply with no answer is an outcome recorded with its class.
func TestCaptureLocalArmRunsThroughTheEngine(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("lmstudio"))
	srv.On("GET", "/v1/models", listed("scripted-not-a-model", "organization_owner"))
	srv.On("POST", "/v1/chat/completions",
		scripted.Reply{Answer: goodAnswer(t, "code")},
		scripted.MustFixture("llama-server/chat_reasoning"),
		scripted.Reply{Answer: goodAnswer(t, "handoff")},
		scripted.Reply{Answer: goodAnswer(t, "agent")})
	o := captureSetup(t, srv, 1, map[string]string{"effort": "medium", "max-output-tokens": "2048"})

	rec, err := Capture(context.Background(), o)
	require.NoError(t, err)

	reqs := srv.RequestsTo("/v1/chat/completions")
	require.Len(t, reqs, 4)
	for i, r := range reqs {
		var body map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &body))
		assert.Equal(t, true, body["stream"], "request %d", i)
		assert.Equal(t, "medium", body["reasoning_effort"], "request %d: the settings' effort, translated for LM Studio", i)
		assert.EqualValues(t, 2048, body["max_tokens"], "request %d", i)
		assert.NotNil(t, body["seed"], "request %d", i)
	}
	assert.Equal(t, "medium", rec.Local.Effort)

	byKey := map[string]Turn{}
	for _, turn := range rec.Turns {
		byKey[turn.Key()] = turn
	}
	assert.True(t, byKey["L/code/1"].Passed)
	assert.Equal(t, "answer", byKey["L/code/1"].Reply)
	codify := byKey["L/codify/1"]
	assert.True(t, codify.Completed)
	assert.False(t, codify.Passed)
	assert.NotEqual(t, "answer", codify.Reply)
	assert.NotEmpty(t, codify.Reply)
	assert.Equal(t, "", byKey["H/code/1"].Reply, "the host's replies have no class")
	agent := byKey["L/agent/1"]
	assert.True(t, agent.Passed, "the two files, graded by the agent task's predicate: %v", agent.Evidence)
	assert.Equal(t, "scripted-not-a-model", agent.Model, "the agent role's model")
	assert.False(t, byKey["H/agent/1"].Passed, "the host's answer (no) fails the predicate")

	var requests, replies []map[string]any
	for _, ev := range journalEvents(t, o.Local.JournalPath) {
		switch ev["event"] {
		case "run_start":
			assert.Equal(t, "eval", ev["mode"])
		case "request":
			requests = append(requests, ev)
		case "reply":
			replies = append(replies, ev)
		}
	}
	require.Len(t, requests, 4)
	require.Len(t, replies, 4)
	assert.Equal(t, "answer", replies[0]["class"])
	assert.Equal(t, codify.Reply, replies[1]["class"])
}

// The input budget holds for arm L: a prompt over it refuses the capture before any request and
// before any host turn is paid for.
func TestCaptureLocalArmKeepsTheInputBudget(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("lmstudio"))
	srv.On("GET", "/v1/models", listed("scripted-not-a-model", "organization_owner"))
	o := captureSetup(t, srv, 1, map[string]string{"max-input-bytes": "200"})

	_, err := Capture(context.Background(), o)
	var budget *rails.BudgetError
	require.True(t, errors.As(err, &budget), "got %v", err)
	status, _, code := engine.Classify(err)
	assert.Equal(t, engine.StatusRefused, status)
	assert.Equal(t, 1, code)
	assert.Empty(t, srv.RequestsTo("/v1/chat/completions"))
	assert.NoFileExists(t, filepath.Join(o.Root, "host-calls"))
}

// Where the server reports model digests (Ollama), the record and its register carry them.
func TestCaptureRecordsTheDigestsTheServerReports(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("ollama"))
	srv.On("GET", "/v1/models", listed("scripted-not-a-model:latest", "library"))
	srv.On("GET", "/api/tags", scripted.Reply{JSON: json.RawMessage(`{"models":[{"name":"scripted-not-a-model:latest","digest":"5c7ac4aead1b"},{"name":"other:1","digest":"ffff"}]}`)})
	srv.On("POST", "/v1/chat/completions", scripted.Reply{Answer: goodAnswer(t, "code")})
	o := captureSetup(t, srv, 1, nil)
	rec, err := Capture(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"scripted-not-a-model": "5c7ac4aead1b"}, rec.Local.Digests)
	register, err := os.ReadFile(RegisterPath(o.Root, o.Name))
	require.NoError(t, err)
	assert.Contains(t, string(register), "  - role code: scripted-not-a-model, digest `5c7ac4aead1b`.\n")
}

// listed is a model list naming one model, owned as the mimicked server owns its models.
func listed(model, owner string) scripted.Reply {
	return scripted.Reply{JSON: json.RawMessage(`{"object":"list","data":[{"id":"` + model + `","object":"model","owned_by":"` + owner + `"}]}`)}
}

// A capture refuses a model the server does not list before any turn: llama-server would
// answer the name with whatever model it loaded, and the record would earn routing for it.
func TestCaptureRefusesAModelTheServerDoesNotList(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("llama-server"))
	o := captureSetup(t, srv, 1, nil)
	_, err := Capture(context.Background(), o)
	require.ErrorContains(t, err, "does not list scripted-not-a-model (it lists tiny)")
	status, _, code := engine.Classify(err)
	assert.Equal(t, engine.StatusRefused, status)
	assert.Equal(t, 1, code)
	assert.Empty(t, srv.RequestsTo("/v1/chat/completions"), "no turn ran")
}
