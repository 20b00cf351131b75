package analyze

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/agent"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/dedup"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/runner/summarize"
	"github.com/locumdev/locum/runner/transform"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const calc = "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// end\n"

const cache = "package cache\n\n// Cache holds values by key.\ntype Cache struct {\n\titems map[string]string\n}\n\n// Get looks a key up.\nfunc (c *Cache) Get(key string) (string, bool) {\n\tv, ok := c.items[key]\n\treturn v, ok\n}\n"

func fence(body string) string { return "```go\n" + body + "\n```" }

var (
	goodEdit = fence("func Add(a, b int) int {\n\treturn a + b\n}")
	badEdit  = fence("func Add(a, b int) int {\n\treturn a * b\n}")
	badEdit2 = fence("func Add(a, b int) int {\n\treturn b - a\n}")
	noBlock  = "Sure! Change the minus to a plus."
	digestOK = `{"digest":[{"text":"Get finds the value of a key.","lines":[8,9]}]}`
	invented = `{"digest":[{"text":"It uses Redis.","lines":[4,5],"quote":"redis.Client"}]}`
)

func streamed(s string) scripted.Reply { return scripted.Reply{StreamAnswer: &s} }
func plain(s string) scripted.Reply    { return scripted.Reply{Answer: &s} }

// golden is one journal produced by a real mode against the scripted server.
type golden struct {
	name    string
	mode    string
	flags   map[string]string
	replies []scripted.Reply
	// embeddings answers /v1/embeddings (dedup).
	embeddings []scripted.Reply
	verify     string
	file       string // the file a transform or summarize works on; "" for calc.go
	baseURL    string // overrides the scripted server's
	// edit rewrites the journal before it is analysed (an older or cut-off journal).
	edit func(lines []string) []string
	// interrupt stops the run as SIGINT does, before its first step.
	interrupt bool
}

var goldens = []golden{
	{name: "transform-good", mode: "transform", replies: []scripted.Reply{streamed(goodEdit)},
		verify: `grep -q "return a + b" calc.go`},
	{name: "transform-gap", mode: "transform", replies: []scripted.Reply{streamed(goodEdit)}, verify: `true`},
	{name: "transform-scope", mode: "transform", file: "missing.go", verify: "true"},
	{name: "transform-budget", mode: "transform", flags: map[string]string{"max-input-bytes": "100"}, verify: "true"},
	{name: "transform-connect", mode: "transform", baseURL: "http://" + scripted.RefusedAddr() + "/v1", verify: "true"},
	{name: "transform-connect-off-loopback", mode: "transform", baseURL: "http://192.0.2.1:1234/v1", verify: "true"},
	{name: "transform-reply-truncated", mode: "transform", verify: "true", replies: []scripted.Reply{{
		JSON: json.RawMessage(`{"choices":[{"finish_reason":"length","message":{"content":"` + "```go\\nfunc Add(" + `"}}],"usage":{"prompt_tokens":90,"completion_tokens":4096}}`)}}},
	{name: "transform-edit-apply", mode: "transform", flags: map[string]string{"max-attempts": "2"},
		replies: []scripted.Reply{plain(noBlock)}, verify: `grep -q "return a + b" calc.go`},
	{name: "transform-edit-apply-recovered", mode: "transform",
		replies: []scripted.Reply{plain(noBlock), plain(goodEdit)}, verify: `grep -q "return a + b" calc.go`},
	{name: "transform-verify-red", mode: "transform", flags: map[string]string{"max-attempts": "2"},
		replies: []scripted.Reply{plain(badEdit), plain(badEdit2)}, verify: `grep -q "return a + b" calc.go`},
	{name: "transform-verify-red-recovered", mode: "transform",
		replies: []scripted.Reply{plain(badEdit), plain(goodEdit)}, verify: `grep -q "return a + b" calc.go`},
	{name: "transform-verify-no-verdict", mode: "transform", replies: []scripted.Reply{plain(goodEdit)}, verify: `grep -q "return a + b" calc.go || exit 1; exit 2`},
	{name: "transform-restore", mode: "transform", flags: map[string]string{"max-attempts": "1"}, replies: []scripted.Reply{plain(badEdit)},
		verify: `grep -q "return a \* b" calc.go || exit 1; rm calc.go; mkdir calc.go; touch calc.go/x; exit 1`},
	{name: "transform-signal", mode: "transform", replies: []scripted.Reply{plain(goodEdit)}, verify: "true", interrupt: true},
	{name: "transform-unfinished", mode: "transform", replies: []scripted.Reply{plain(goodEdit)}, verify: `grep -q "return a + b" calc.go`,
		edit: func(lines []string) []string { return lines[:len(lines)-3] }},
	{name: "transform-journal-v0", mode: "transform", replies: []scripted.Reply{plain(goodEdit)}, verify: `grep -q "return a + b" calc.go`,
		edit: dropVersionFields},
	{name: "summarize-good", mode: "summarize", file: "cache.go", replies: []scripted.Reply{streamed(digestOK)}},
	{name: "summarize-gate", mode: "summarize", file: "cache.go", replies: []scripted.Reply{plain(invented)}},
	{name: "summarize-reply-malformed", mode: "summarize", file: "cache.go", replies: []scripted.Reply{plain(`{"summary": "no digest key"}`)}},
	{name: "summarize-malformed-recovered", mode: "summarize", file: "cache.go",
		replies: []scripted.Reply{plain("Here is a summary: the cache caches."), plain(digestOK)}},
	{name: "dedup-good", mode: "dedup", embeddings: []scripted.Reply{{JSON: json.RawMessage(
		`{"object":"list","data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0.8,0.6]}],"usage":{"prompt_tokens":12,"total_tokens":12}}`)}}},
	{name: "dedup-budget", mode: "dedup", flags: map[string]string{"max-input-bytes": "4"}},
	// Agent transcripts: the tool loop in a worktree, its guardrails and its verify rounds.
	{name: "agent-completed", mode: "agent", verify: `grep -q "return a + b" calc.go`, replies: []scripted.Reply{
		call("read_file", `{"path":"calc.go"}`),
		call("edit_file", `{"path":"calc.go","search":"return a - b","replace":"return a + b"}`),
		call("finish", `{"summary":"Add adds"}`)}},
	{name: "agent-guardrail-recovered", mode: "agent", verify: `grep -q "return a + b" calc.go`, replies: []scripted.Reply{
		call("edit_file", `{"path":"calc.go","search":"a - b","replace":"a + b"}`),
		call("read_file", `{"path":"calc.go"}`),
		call("edit_file", `{"path":"calc.go","search":"return a - b","replace":"return a + b"}`),
		call("finish", `{"summary":"Add adds"}`)}},
	{name: "agent-guardrail", mode: "agent", verify: `grep -q "return a + b" calc.go`, flags: map[string]string{"max-turns": "2"}, replies: []scripted.Reply{
		call("read_file", `{"path":"../outside.go"}`),
		call("write_file", `{"path":".git/config","content":"x"}`)}},
	{name: "agent-verify-red", mode: "agent", verify: `grep -q "return a + b" calc.go`, flags: map[string]string{"verify-rounds": "0"}, replies: []scripted.Reply{
		call("read_file", `{"path":"calc.go"}`),
		call("edit_file", `{"path":"calc.go","search":"return a - b","replace":"return a * b"}`),
		call("finish", `{"summary":"Add multiplies"}`)}},
}

func call(name, args string) scripted.Reply {
	return scripted.Reply{Calls: []scripted.Call{{Name: name, Arguments: json.RawMessage(args)}}}
}

// dropVersionFields turns a journal into what locum wrote before journal version 1.
func dropVersionFields(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var ev map[string]any
		if json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		delete(ev, "journal_version")
		delete(ev, "prompt_sha256")
		if ev["event"] == "scope" {
			delete(ev, "verify")
		}
		data, _ := json.Marshal(ev)
		out = append(out, string(data))
	}
	return out
}

func settings(t *testing.T, mode, baseURL string, extra map[string]string) *packs.Settings {
	t.Helper()
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	flags := map[string]string{"base-url": baseURL}
	for k, v := range extra {
		flags[k] = v
	}
	s, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve(mode, nil, flags)
	require.NoError(t, err)
	return s
}

// produce runs the golden's mode for real and returns its journal's path.
func produce(t *testing.T, g golden) string {
	t.Helper()
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("lmstudio"))
	if len(g.replies) > 0 {
		srv.On("POST", "/v1/chat/completions", g.replies...)
	}
	if len(g.embeddings) > 0 {
		srv.On("POST", "/v1/embeddings", g.embeddings...)
	}
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "calc.go"), []byte(calc), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.go"), []byte(cache), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "notes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes", "a.md"), []byte("alpha text\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes", "b.md"), []byte("beta text\n"), 0o644))
	base := srv.BaseURL()
	if g.baseURL != "" {
		base = g.baseURL
	}
	journal := filepath.Join(t.TempDir(), "run.jsonl")
	spec := engine.RunSpec{Mode: g.mode, Root: root, Settings: settings(t, g.mode, base, g.flags), Model: "qwen3-coder-30b",
		Routing: "operator", JournalPath: journal, Args: []string{"make Add add"}, Version: "test"}
	file := g.file
	if file == "" {
		file = "calc.go"
	}
	var steps []engine.Step
	switch g.mode {
	case "transform":
		steps = transform.Steps(transform.Options{File: file, Verify: g.verify, Task: "make Add add", Cwd: root, Root: root})
	case "summarize":
		var claims []summarize.Claim
		steps = summarize.Steps(summarize.Options{File: file, Cwd: root, Root: root}, &claims)
	case "agent":
		gittest.Init(t, root)
		gittest.CommitAll(t, root)
		steps = agent.Steps(agent.Options{Task: "make Add add", Verify: g.verify, Root: root})
	case "dedup":
		spec.Model = "tiny-embed"
		steps = dedup.Steps(dedup.Options{Dir: filepath.Join(root, "notes"), Root: root, NoCache: true}, &dedup.Result{})
	}
	ctx := context.Background()
	if g.interrupt {
		c, cancel := context.WithCancelCause(ctx)
		cancel(&client.SignalError{Signal: os.Interrupt})
		ctx = c
	}
	engine.Execute(ctx, spec, steps)
	if g.edit != nil {
		data, err := os.ReadFile(journal)
		require.NoError(t, err)
		lines := g.edit(strings.Split(strings.TrimSpace(string(data)), "\n"))
		require.NoError(t, os.WriteFile(journal, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}
	return journal
}

// stable drops what changes from one run to the next: the id, the time, the timings; and the
// seal, which these journals written with no key and some edited after do not have.
func stable(r Run) Run {
	r.Unsealed = false
	// A failed restore names the scratch directory, which changes with every run.
	for i, f := range r.Failures {
		if f.Stage == StageRestore {
			r.Failures[i].Detail, _, _ = strings.Cut(f.Detail, "/")
		}
	}
	r.ID = "RUN"
	r.Start = time.Time{}
	r.Figures.TTFTms = nil
	r.Figures.Rate = nil
	return r
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			journal := produce(t, g)
			r, err := AnalyzeFile(journal, nil)
			require.NoError(t, err)
			got, err := json.MarshalIndent(stable(r), "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", g.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
				// The journal itself seeds FuzzAnalyze with what the modes really write; written once,
				// since its times and ports change with every run.
				seed := filepath.Join("testdata", "journals", g.name+".jsonl")
				if _, err := os.Stat(seed); err != nil {
					data, err := os.ReadFile(journal)
					require.NoError(t, err)
					require.NoError(t, os.MkdirAll(filepath.Dir(seed), 0o755))
					require.NoError(t, os.WriteFile(seed, data, 0o644))
				}
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./runner/analyze -run TestGolden -update to write it")
			assert.Equal(t, string(want), string(got))
		})
	}
}

// Every stage a run of the four modes can fail at has a golden journal (restore as the final
// stage, since it follows another failure).
func TestGoldenCoversEveryStage(t *testing.T) {
	want := []string{StageScope, StageBudget, StageConnect, StageReply, StageEditApply, StageVerifyRed, StageVerifyNoVerdict, StageGate, StageGuardrail, StageSignal, StageRestore, StageUnfinished}
	seen := map[string]bool{}
	for _, g := range goldens {
		data, err := os.ReadFile(filepath.Join("testdata", "golden", g.name+".json"))
		require.NoError(t, err)
		var r Run
		require.NoError(t, json.Unmarshal(data, &r))
		stage, _, _ := strings.Cut(r.Primary, ":")
		seen[stage] = true
		// A restore fails only after another stage did: it is the final stage, never the first.
		if r.Final == StageRestore {
			seen[StageRestore] = true
		}
	}
	for _, s := range want {
		assert.True(t, seen[s], "no golden journal fails first at %s", s)
	}
}
