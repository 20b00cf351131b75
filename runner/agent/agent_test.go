package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func calls(name, args string) scripted.Reply {
	return scripted.Reply{Calls: []scripted.Call{{Name: name, Arguments: json.RawMessage(args)}}}
}

// A run through the engine: the calls in order, a line per call on the progress writer with the
// model's text escaped, and the result's details.
func TestRunThroughTheEngine(t *testing.T) {
	root := gittest.Repo(t, map[string]string{"a.txt": "hello\n"})
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions",
		calls("read_file", `{"path":"a.txt"}`),
		calls("edit_file", `{"path":"a.txt","search":"hello","replace":"goodbye"}`),
		calls("grep", `{"pattern":"good\u001b[2J"}`),
		calls("finish", `{"summary":"done"}`))
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("agent", nil, map[string]string{"base-url": s.BaseURL()})
	require.NoError(t, err)
	var progress bytes.Buffer
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "agent", Root: root, Settings: settings, Model: runtest.Model,
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl"), Progress: &progress},
		Steps(Options{Task: "say goodbye", Verify: "grep -q goodbye a.txt", Root: root}))
	require.Equal(t, 0, res.ExitCode, "%+v", res.Error)
	d := res.Details.(*engine.AgentDetails)
	assert.Equal(t, new(StatusCompleted), d.Status)
	assert.Equal(t, []string{"a.txt"}, d.FilesChanged)
	assert.Equal(t, 4, d.Turns)
	assert.Equal(t, "agent: turn 1: read_file a.txt\nagent: turn 2: edit_file a.txt\nagent: turn 3: grep good\\x1b[2J\nagent: turn 4: finish\n", progress.String())
	data, err := os.ReadFile(filepath.Join(root, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(data), "the user's tree is never touched")
	out, err := gitsafe.Run(context.Background(), root, "show", "refs/heads/"+Branch(res.RunID)+":a.txt")
	require.NoError(t, err)
	assert.Equal(t, "goodbye\n", out)
}

// An observer hears each turn, with the calls it made, and each verify: the baseline, a
// run_verify, and the round after finish.
func TestObserverHearsEachTurnAndVerify(t *testing.T) {
	root := gittest.Repo(t, map[string]string{"a.txt": "hello\n"})
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions",
		calls("read_file", `{"path":"a.txt"}`),
		scripted.Reply{Answer: new("I will edit it now.")},
		calls("edit_file", `{"path":"a.txt","search":"hello","replace":"goodbye"}`),
		calls("run_verify", `{}`),
		calls("finish", `{"summary":"done"}`))
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("agent", nil, map[string]string{"base-url": s.BaseURL(), "max-turns": "9"})
	require.NoError(t, err)
	var heard []string
	observe := engine.ObserverFunc(func(ev engine.ProgressEvent) {
		if ev.Stage != engine.StagePrefill && ev.Stage != engine.StageDecode {
			heard = append(heard, fmt.Sprintf("%s %d %s", ev.Stage, ev.Attempt, ev.What))
		}
	})
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "agent", Root: root, Settings: settings, Model: runtest.Model,
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl"), Observer: observe},
		Steps(Options{Task: "say goodbye", Verify: "grep -q goodbye a.txt", Root: root}))
	require.Equal(t, 0, res.ExitCode, "%+v", res.Error)
	assert.Equal(t, []string{
		"verify 1 ",
		"turn 1 turn 1 of 9: read_file a.txt",
		"turn 2 turn 2 of 9: no tool call (text); asked again",
		"turn 3 turn 3 of 9: edit_file a.txt",
		"turn 4 turn 4 of 9: run_verify",
		"verify 4 run_verify in turn 4",
		"turn 5 turn 5 of 9: finish",
		"verify 5 round 1 of 3, after finish",
	}, heard)
}

// A turn's progress names its first calls and counts the rest.
func TestCallsWords(t *testing.T) {
	read := client.ToolCall{Name: "read_file", Arguments: `{"path":"a.go"}`}
	for _, tt := range []struct {
		calls []client.ToolCall
		want  string
	}{
		{[]client.ToolCall{read}, "read_file a.go"},
		{[]client.ToolCall{{Name: "grep", Arguments: `{"pattern":"x\u001b[2J","path":"pkg"}`}}, `grep x\x1b[2J pkg`},
		{[]client.ToolCall{read, read, read}, "read_file a.go, read_file a.go, read_file a.go"},
		{[]client.ToolCall{read, read, read, read, read}, "read_file a.go, read_file a.go, read_file a.go and 2 more"},
		{[]client.ToolCall{{Name: "finish", Arguments: `not json`}}, "finish"},
	} {
		assert.Equal(t, tt.want, callsWords(tt.calls))
	}
}

// A reply with more tool calls than a turn runs: the first MaxCallsPerTurn run, the model is told
// the rest did not, and the run goes on.
func TestATurnRunsAtMostMaxCallsPerTurn(t *testing.T) {
	root := gittest.Repo(t, map[string]string{"a.txt": "hello\n"})
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	many := scripted.Reply{}
	for range 3 * MaxCallsPerTurn {
		many.Calls = append(many.Calls, scripted.Call{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)})
	}
	s.On("POST", "/v1/chat/completions", many,
		calls("edit_file", `{"path":"a.txt","search":"hello","replace":"goodbye"}`),
		calls("finish", `{"summary":"done"}`))
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("agent", nil, map[string]string{"base-url": s.BaseURL()})
	require.NoError(t, err)
	journal := filepath.Join(t.TempDir(), "j.jsonl")
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "agent", Root: root, Settings: settings, Model: runtest.Model, JournalPath: journal},
		Steps(Options{Task: "say goodbye", Verify: "grep -q goodbye a.txt", Root: root}))
	require.Equal(t, 0, res.ExitCode, "%+v", res.Error)
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	assert.Equal(t, MaxCallsPerTurn+2, bytes.Count(data, []byte(`"event":"tool_call"`)), "16 of the first reply's calls, then one a turn")
	assert.Contains(t, string(data), `"dropped":32`)
	second := s.RequestsTo("/v1/chat/completions")[1]
	assert.Contains(t, string(second.Body), "Only your first 16 tool calls ran; the other 32 did not.")
}

// What a verify leaves where git ignores it (build output, caches) stays for the next verify and
// for the tools to read; what it changes of the files a commit could take is put back.
func TestSettleKeepsIgnoredOutput(t *testing.T) {
	root := gittest.Repo(t, map[string]string{"a.txt": "hello\n", ".gitignore": "out/\n"})
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions",
		calls("read_file", `{"path":"a.txt"}`),
		calls("edit_file", `{"path":"a.txt","search":"hello","replace":"goodbye"}`),
		calls("run_verify", `{}`),
		calls("read_file", `{"path":"out/bin"}`),
		calls("finish", `{"summary":"done"}`))
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("agent", nil, map[string]string{"base-url": s.BaseURL()})
	require.NoError(t, err)
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "agent", Root: root, Settings: settings, Model: runtest.Model,
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl")},
		Steps(Options{Task: "say goodbye", Verify: "mkdir -p out && echo built > out/bin && echo appended >> a.txt && grep -q goodbye a.txt", Root: root}))
	require.Equal(t, 0, res.ExitCode, "%+v", res.Error)
	assert.Equal(t, []string{"a.txt"}, res.Details.(*engine.AgentDetails).VerifyUndone)
	reqs := s.RequestsTo("/v1/chat/completions")
	assert.Contains(t, string(reqs[3].Body), "The verify command changed a.txt; locum put back")
	assert.Contains(t, string(reqs[4].Body), `out/bin, lines 1-1 of 1:\n1\tbuilt`, "ignored output stays")
	out, err := gitsafe.Run(context.Background(), root, "show", "refs/heads/"+Branch(res.RunID)+":a.txt")
	require.NoError(t, err)
	assert.Equal(t, "goodbye\n", out)
}
