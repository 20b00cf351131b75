package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
)

const calc = "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

var goodEdit = "```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```"

// fixture is a repository with one file, a scripted server, and a connected client.
type fixture struct {
	root   string
	server *Server
	llm    *scripted.Server
	client *sdk.ClientSession
	// env is the server's environment.
	env map[string]string

	mu       sync.Mutex
	progress []string
	onProg   func(msg string)
	// progressed is signalled after each progress notification is recorded.
	progressed chan struct{}
}

// servedTools are the tools locum mcp lists, to every client.
var servedTools = []string{"status", "transform", "verify_check", "summarize", "handoff", "dedup", "agent", "run", "symbols", "runs_show", "ledger"}

// waitProgress waits until a progress notification holding want has arrived: the client
// handles notifications on its own goroutine, so the last may land after the call's result.
// Only a hang reaches the deadline.
func (f *fixture) waitProgress(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		f.mu.Lock()
		got := strings.Join(f.progress, "\n")
		f.mu.Unlock()
		if strings.Contains(got, want) {
			return got
		}
		select {
		case <-f.progressed:
		case <-deadline:
			t.Fatalf("no progress notification holds %q; got:\n%s", want, got)
		}
	}
}

func newFixture(t *testing.T, allowModel bool) *fixture {
	t.Helper()
	f := &fixture{root: t.TempDir(), llm: scripted.New(), progressed: make(chan struct{}, 1)}
	t.Cleanup(f.llm.Close)
	require.NoError(t, f.llm.Mimic("lmstudio"))
	// A repository of its own, so the journals go under its git directory.
	gittest.Init(t, f.root)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "calc.go"), []byte(calc), 0o644))
	// A HOME of its own: the operator's key, which seals the journals, is made there.
	// No mutants after a kept edit but where a test turns them on: most tests are of other things.
	env := map[string]string{"LOCUM_BASE_URL": f.llm.BaseURL(), "HOME": t.TempDir(), "LOCUM_MUTANTS": "0"}
	f.env = env
	s, err := New(Options{Dir: f.root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, AllowModel: allowModel, Version: "test"})
	require.NoError(t, err)
	f.server = s

	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, serverT) }()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, req.Params.Message)
			on := f.onProg
			f.mu.Unlock()
			select {
			case f.progressed <- struct{}{}:
			default:
			}
			if on != nil {
				on(req.Params.Message)
			}
		},
	})
	f.client, err = c.Connect(ctx, clientT, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		f.client.Close()
		cancel()
		<-done
	})
	return f
}

func (f *fixture) call(t *testing.T, ctx context.Context, name string, args map[string]any, token any) (*sdk.CallToolResult, error) {
	t.Helper()
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := f.client.CallTool(ctx, p)
	if err == nil {
		holdsTheResultContract(t, name, res)
	}
	return res, err
}

// holdsTheResultContract checks a mode's structured content against spec/result.schema.json, and
// symbols' against spec/symbols.schema.json, the contracts the tools name instead of declaring an
// output schema: every object a call returns, refusals included.
func holdsTheResultContract(t *testing.T, tool string, res *sdk.CallToolResult) {
	t.Helper()
	contract := schema.Result
	switch tool {
	case "transform", "summarize", "handoff", "dedup", "agent", "run":
	case "symbols":
		contract = schema.Symbols
	default:
		return
	}
	if res.StructuredContent == nil {
		return
	}
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	v, err := schema.New()
	require.NoError(t, err)
	_, err = v.Validate(contract, tool+" structuredContent", data)
	assert.NoError(t, err, "%s", data)
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

func (f *fixture) file(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join(f.root, "calc.go"))
	require.NoError(t, err)
	return string(data)
}

func TestToolsAndTheirSchemas(t *testing.T) {
	f := newFixture(t, false)
	list, err := f.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	byName := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
		assert.NotEmpty(t, tool.Description, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		assert.NotContains(t, string(schema), "allow_remote", "only the operator widens the loopback rail")
	}
	require.ElementsMatch(t, servedTools, keys(byName))
	assert.ElementsMatch(t, keys(byName), f.server.Tools(), "Tools names what the server lists")
	in := byName["transform"].InputSchema.(map[string]any)
	assert.ElementsMatch(t, []any{"file", "verify", "task"}, in["required"])
	props := in["properties"].(map[string]any)
	for _, k := range []string{"lines", "model", "role", "base_url", "max_attempts", "effort"} {
		assert.Contains(t, props, k)
	}
	for name, tool := range byName {
		assert.Nil(t, tool.OutputSchema, "%s declares no output schema: its structured content's contract is published, not sent for every turn", name)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestStatus(t *testing.T) {
	f := newFixture(t, false)
	res, err := f.call(t, context.Background(), "status", map[string]any{}, nil)
	require.NoError(t, err)
	assert.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), "LM Studio answers at "+f.llm.BaseURL())
	assert.Equal(t, true, structured(t, res)["up"])

	// Off loopback is refused before any request: a tool result, never a protocol error.
	res, err = f.call(t, context.Background(), "status", map[string]any{"base_url": "http://192.0.2.1:1234/v1"}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "REFUSED: refusing endpoint")
	assert.Equal(t, "off_loopback", structured(t, res)["error"].(map[string]any)["kind"], "the report says why, as locum status --json does")
	assert.Equal(t, false, structured(t, res)["up"])
}

func TestTransformKeptWithProgress(t *testing.T) {
	f := newFixture(t, true)
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
	res, err := f.call(t, context.Background(), "transform", map[string]any{
		"file": "calc.go", "lines": "3-5", "verify": `grep -q "return a + b" calc.go`, "task": "make Add add", "model": "qwen3-coder-30b",
	}, "tok-1")
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Contains(t, f.file(t), "return a + b")
	out := structured(t, res)
	assert.Equal(t, "OK", out["status"])
	assert.Equal(t, "operator", out["routing"])
	assert.Equal(t, "kept", out["details"].(map[string]any)["outcome"])
	// One line: the status, the outcome and what it saved; the object is the structured content's.
	assert.Regexp(t, `^OK: transform: kept calc.go lines 3-5 \(\+1 -1\), verify exit 0; fixed: the verify failed before the edit; saved=[-+]\$[0-9.]+\(est\) run=\S+$`, text(res))
	assert.Equal(t, "calc.go:4\n-\treturn a - b\n+\treturn a + b\n", out["details"].(map[string]any)["changes"])
	assert.NotContains(t, text(res), "return a + b", "the compact diff is the structured content's")
	host := out["host"].(map[string]any)
	assert.Equal(t, "estimated", host["method"])

	got := f.waitProgress(t, "verify running (attempt 1)")
	assert.Contains(t, got, "prefill")
	assert.Regexp(t, `decode: \d+ tokens so far`, got)

	// The journal of that run reads back through runs_show.
	id := out["run_id"].(string)
	show, err := f.call(t, context.Background(), "runs_show", map[string]any{"run_id": id[:12]}, nil)
	require.NoError(t, err)
	require.False(t, show.IsError, text(show))
	assert.Contains(t, text(show), "run_end")
	events := structured(t, show)["events"].([]any)
	assert.Equal(t, "run_end", events[len(events)-1].(map[string]any)["event"])
	assert.Equal(t, true, structured(t, show)["sealed"], "the run sealed its journal with the operator's key")
	assert.NotContains(t, text(show), "unsealed")
}

func TestTransformRedRestores(t *testing.T) {
	f := newFixture(t, true)
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
	res, err := f.call(t, context.Background(), "transform", map[string]any{
		"file": "calc.go", "verify": "exit 1", "task": "make Add add", "model": "qwen3-coder-30b", "max_attempts": 2,
	}, nil)
	require.NoError(t, err)
	require.True(t, res.IsError)
	assert.Equal(t, "RED", structured(t, res)["status"])
	assert.Contains(t, text(res), "transform: restored calc.go")
	assert.Equal(t, calc, f.file(t))
	assert.Len(t, f.llm.RequestsTo("/v1/chat/completions"), 2)
}

// TestRedTransformHandsOver: a red transform's structured content carries its handoff within its
// bound: the last attempt the verify judged (the second: the third reply could not be applied),
// as a diff, with that verify's output and what to do next.
func TestRedTransformHandsOver(t *testing.T) {
	f := newFixture(t, true)
	times := "```go\nfunc Add(a, b int) int {\n\treturn a * b\n}\n```"
	swapped := "```go\nfunc Add(a, b int) int {\n\treturn b - a\n}\n```"
	prose := "Sure: make it add."
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &times}, scripted.Reply{StreamAnswer: &swapped}, scripted.Reply{StreamAnswer: &prose})
	res, err := f.call(t, context.Background(), "transform", map[string]any{
		"file": "calc.go", "lines": "3-5", "verify": `grep -q "return a + b" calc.go || { grep -n return calc.go; exit 1; }`,
		"task": "make Add add", "model": "qwen3-coder-30b", "max_attempts": 3,
	}, nil)
	require.NoError(t, err)
	require.True(t, res.IsError)
	out := structured(t, res)
	require.Equal(t, "RED", out["status"])
	h, ok := out["handoff"].(map[string]any)
	require.True(t, ok, "%v", out["handoff"])
	assert.Equal(t, "red", h["failure"])
	assert.Equal(t, float64(2), h["attempt"])
	assert.Contains(t, h["diff"], "\n-\treturn a - b\n+\treturn b - a\n")
	assert.Equal(t, true, h["verified"])
	assert.Contains(t, h["verify_tail"], "4:\treturn b - a")
	assert.NotEmpty(t, h["next"])
	data, err := json.Marshal(h)
	require.NoError(t, err)
	assert.Equal(t, float64(len(data)), h["bytes"], "bytes is the handoff's size as the host reads it")
	assert.LessOrEqual(t, len(data), engine.MaxHandoffBytes)
	t.Logf("handoff in the MCP result: %d bytes", len(data))
	assert.Equal(t, calc, f.file(t))
}

func TestRefusalsAreToolResults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		allowModel bool
		args       map[string]any
		want       string
	}{
		{"a model the operator did not allow", false, map[string]any{"model": "qwen3-coder-30b"}, "REFUSED: this server runs the model a role is routed to"},
		{"a role with no earned routing", true, map[string]any{"role": "code"}, `REFUSED: role "code" has no earned routing`},
		{"a setting that does not parse", true, map[string]any{"model": "qwen3-coder-30b", "effort": "huge"}, "ERROR: "},
		{"a prompt over the budget", true, map[string]any{"model": "qwen3-coder-30b", "max_input_bytes": 20}, "over the input budget of 20 bytes (`max_input_bytes`); narrow it with `lines` A-B"},
		{"a task over the budget", true, map[string]any{"model": "qwen3-coder-30b", "max_input_bytes": 10}, "the task is 12 bytes, over the input budget of 10 bytes (`max_input_bytes`); shorten the task"},
		{"a file out of the repository", true, map[string]any{"model": "qwen3-coder-30b", "file": "../x.go"}, "ERROR"},
		{"an endpoint off loopback", true, map[string]any{"model": "qwen3-coder-30b", "base_url": "http://192.0.2.1:1234/v1"}, "leave loopback (the operator's allow-remote option of locum mcp, LOCUM_ALLOW_REMOTE=1"},
		{"lines and symbol both", true, map[string]any{"model": "qwen3-coder-30b", "lines": "1-2", "symbol": "Add"}, "`lines` and `symbol` both name the span"},
		{"lines out of bounds", true, map[string]any{"model": "qwen3-coder-30b", "lines": "90-99"}, "`lines` 90-99 is out of bounds"},
		{"an empty verify", true, map[string]any{"model": "qwen3-coder-30b", "verify": ""}, "`verify` is empty"},
		{"a budget the call would raise", true, map[string]any{"model": "qwen3-coder-30b", "max_input_bytes": 100000000}, "a tool call may lower it, never raise it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.allowModel)
			f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
			args := map[string]any{"file": "calc.go", "verify": "true", "task": "make Add add"}
			for k, v := range tc.args {
				args[k] = v
			}
			res, err := f.call(t, context.Background(), "transform", args, nil)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, text(res), tc.want)
			if strings.HasPrefix(tc.want, "REFUSED: ") {
				// Refused before a run: the result object of a run that never began, whose error
				// names the command that lifts a role's refusal, and no text names a CLI flag.
				obj := structured(t, res)
				assert.Equal(t, "REFUSED", obj["status"])
				assert.Equal(t, float64(0), obj["attempts"])
				errObj, _ := obj["error"].(map[string]any)
				assert.Equal(t, "refused", errObj["kind"])
				if tc.args["role"] != nil {
					assert.Equal(t, "locum roles accept code MODEL", errObj["command"])
				}
				assert.NotContains(t, text(res), "--", "an MCP refusal names tool arguments and commands, never a CLI flag")
			}
			assert.NotContains(t, text(res), "--", "an MCP message names tool arguments and commands, never a CLI flag")
			assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"), "refused before any request")
			assert.Equal(t, calc, f.file(t))
		})
	}
}

// A model the server does not list, named by a tool call, is refused before any request, in
// the tool's words; no argument of a call can send it anyway.
func TestAnUnlistedModelIsRefused(t *testing.T) {
	f := newFixture(t, true)
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
	res, err := f.call(t, context.Background(), "transform", map[string]any{"file": "calc.go", "verify": "true", "task": "make Add add", "model": "gpt-4o"}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	obj := structured(t, res)
	assert.Equal(t, "REFUSED", obj["status"])
	errObj, _ := obj["error"].(map[string]any)
	assert.Equal(t, "model_not_listed", errObj["kind"])
	assert.Contains(t, text(res), "does not list gpt-4o (it lists qwen3-coder-30b, text-embedding-nomic-embed-text-v1.5)")
	assert.Contains(t, text(res), "send this one anyway with the operator's allow-unlisted-model option of locum mcp")
	assert.NotContains(t, text(res), "--", "an MCP message names tool arguments and commands, never a CLI flag")
	assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"), "refused before any request")
	assert.Equal(t, calc, f.file(t))

	res, err = f.call(t, context.Background(), "transform", map[string]any{"file": "calc.go", "verify": "true", "task": "make Add add", "model": "gpt-4o", "allow_unlisted_model": true}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), `unexpected additional properties ["allow_unlisted_model"]`, "no argument of a call forces an unlisted model")
	assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"))
}

func TestUnknownToolIsAProtocolError(t *testing.T) {
	f := newFixture(t, false)
	_, err := f.call(t, context.Background(), "rm", map[string]any{}, nil)
	require.Error(t, err)
}

// A cancelled call stops the run as SIGINT does: the verify command is stopped and the file has
// its original bytes back before the call's turn on the file ends.
func TestCancelRestoresTheFile(t *testing.T) {
	f := newFixture(t, true)
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.mu.Lock()
	f.onProg = func(msg string) {
		if strings.HasPrefix(msg, "verify running") {
			cancel()
		}
	}
	f.mu.Unlock()
	_, err := f.call(t, ctx, "transform", map[string]any{
		"file": "calc.go", "verify": "sleep 60", "task": "make Add add", "model": "qwen3-coder-30b", "no_baseline": true,
	}, "tok")
	require.ErrorIs(t, err, context.Canceled)

	// The file's lock is released only once the run's guards have run.
	unlock, err := f.server.locks.lock(context.Background(), lockKey(f.root, "calc.go"), nil)
	require.NoError(t, err)
	unlock()
	assert.Equal(t, calc, f.file(t))

	dir := filepath.Join(f.root, ".git", "locum", "runs")
	var found bool
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			data, _ := os.ReadFile(p)
			if strings.Contains(string(data), "stopped by notifications/cancelled") {
				found = true
				assert.Contains(t, string(data), `"outcome":"restored"`)
			}
		}
		return nil
	})
	assert.True(t, found, "the journal says the host cancelled the run")
}

// The ledger tool returns the object locum ledger --json prints; the server's instructions carry
// the break-even a host obeys before it calls.
func TestLedgerAndTheBreakEvenInTheInstructions(t *testing.T) {
	f := newFixture(t, true)
	assert.Contains(t, f.client.InitializeResult().Instructions, "transform pays at any size at a 50% keep rate (prior); at any size above a 36% keep rate")

	runs := filepath.Join(f.root, ".git", "locum", "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	files, err := filepath.Glob("../runner/ledger/testdata/runs/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(runs, filepath.Base(name)), data, 0o644))
	}
	// Unsealed, as a repository could bring them: not counted, and said to be.
	res, err := f.call(t, context.Background(), "ledger", nil, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 0, structured(t, res)["total"].(map[string]any)["runs"])
	assert.EqualValues(t, 10, structured(t, res)["unsealed"])
	assert.Contains(t, text(res), "10 journals not counted: locum cannot show it wrote them")
	// Sealed with the operator's key, as the runs that wrote them would have.
	key, err := engine.JournalKey(func(k string) (string, bool) { v, ok := f.env[k]; return v, ok }, true)
	require.NoError(t, err)
	for _, name := range files {
		require.NoError(t, engine.SealJournal(filepath.Join(runs, filepath.Base(name)), strings.TrimSuffix(filepath.Base(name), ".jsonl"), key))
	}
	res, err = f.call(t, context.Background(), "ledger", map[string]any{"by": "week"}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	out := structured(t, res)
	assert.Equal(t, "week", out["by"])
	total := out["total"].(map[string]any)
	assert.EqualValues(t, 10, total["runs"])
	assert.EqualValues(t, -99195, total["net_tokens"])
	assert.Regexp(t, `^10 runs, 5 kept; saved you net of losses: \+\$0\.0003, -99195 tokens \(estimated\); .*transform for role code on qwen2.5-coder-1.5b pays from 392 span lines`, text(res))

	res, err = f.call(t, context.Background(), "ledger", map[string]any{"since": "yesterday"}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "since")
}

// After a kept edit the verify runs against mutants of the span: the text and the result say how
// many it rejected, and a verify that passed them all says to read the diff.
func TestTransformSaysTheVerifyStrength(t *testing.T) {
	f := newFixture(t, true)
	f.env["LOCUM_MUTANTS"] = "4"
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
	res, err := f.call(t, context.Background(), "transform", map[string]any{
		"file": "calc.go", "lines": "3-5", "verify": `grep -q "return a + b" calc.go`, "task": "make Add add", "model": "qwen3-coder-30b",
	}, "tok-s")
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	out := structured(t, res)
	assert.Equal(t, "2/2", out["verify_strength"], text(res))
	assert.Contains(t, text(res), "; the verify rejected all 2 changes locum made to the span;")
	f.waitProgress(t, "checking the verify")

	require.NoError(t, os.WriteFile(filepath.Join(f.root, "calc.go"), []byte(calc), 0o644))
	res, err = f.call(t, context.Background(), "transform", map[string]any{
		"file": "calc.go", "lines": "3-5", "verify": "true", "task": "make Add add", "model": "qwen3-coder-30b",
	}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "0/2", structured(t, res)["verify_strength"])
	assert.Contains(t, text(res), "cannot tell a wrong edit from a right one there: read the diff")
}

// verify_check runs the verify against the span's mutants with no model: RED where it rejects
// none, OK where it rejects them, the tree untouched either way.
func TestVerifyCheckTool(t *testing.T) {
	f := newFixture(t, false)
	res, err := f.call(t, context.Background(), "verify_check", map[string]any{"file": "calc.go", "lines": "3-5", "verify": "true"}, nil)
	require.NoError(t, err)
	require.True(t, res.IsError, text(res))
	assert.Regexp(t, `^RED: verify-check: calc.go lines 3-5: the verify passed all \d changes locum made to the span`, text(res))
	assert.Equal(t, "blind", structured(t, res)["error"].(map[string]any)["kind"])
	assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"), "no model is asked")

	res, err = f.call(t, context.Background(), "verify_check", map[string]any{"file": "calc.go", "lines": "3-5", "verify": `grep -q "return a - b" calc.go`}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Regexp(t, `^[1-9]/[1-9]$`, structured(t, res)["verify_strength"])
	assert.Equal(t, calc, f.file(t))
}
