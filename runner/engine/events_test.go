package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
)

// eventCase is one event as a mode writes it, and how a reader takes its kind back.
type eventCase struct {
	ev     Event
	decode func(map[string]any) (Event, bool)
}

func caseOf[E Event](ev E) eventCase {
	return eventCase{ev: ev, decode: func(m map[string]any) (Event, bool) { return DecodeEvent[E](m) }}
}

// poolServer is a workflow's server as its servers event encodes it.
type poolServer struct {
	URL      string `json:"url"`
	Kind     string `json:"kind"`
	Slots    int    `json:"slots,omitempty"`
	Capacity int    `json:"capacity"`
	Running  int    `json:"running"`
	Done     int    `json:"done"`
	Red      int    `json:"red"`
}

// fixtureEvents are the events of testdata/events.jsonl, in its order: each shape every writer
// writes, with the values that decide a field's presence (null, zero, empty) among them. The
// file was written by the journal before events had types, from maps of these values.
func fixtureEvents() []eventCase {
	in, out := int64(120), int64(45)
	return []eventCase{
		caseOf(RunStartEvent{JournalVersion: JournalVersion, Mode: "transform", Model: "qwen", Routing: "operator",
			Settings: []packs.Setting{{Key: "role", Value: "edit", Source: "default"}}, Args: []string{"a.go", "--lines", "1-3"}, Version: "v0.1", Root: "/r",
			Parent: &ParentRun{Run: "20260102T000000Z-000000", Step: "edit", Item: "a.go"}}),
		caseOf(RunStartEvent{JournalVersion: JournalVersion, Mode: "dedup", Settings: []packs.Setting{}}),
		caseOf(StepEvent{Step: "scope"}),
		caseOf(StepFailedEvent{Step: "connect", Error: "no server <at> & x"}),
		caseOf(RequestEvent{Step: "edit", Model: "qwen", PromptBytes: 1234, PromptSHA256: "ab12", MaxTokens: 512, Effort: "low", Stream: true,
			MaxTokensAsked: new(int64(1024)), Temperature: new(0.2), Seed: new(int64(7))}),
		caseOf(RequestEvent{Step: "digest", Model: "qwen"}),
		caseOf(ReplyFailedEvent{Step: "edit", Error: new("probe failed"), Sent: new(false)}),
		caseOf(ReplyFailedEvent{Step: "edit"}),
		caseOf(CapabilitiesEvent{Step: "edit", Model: "qwen", Capabilities: "unknown", Error: "no /props"}),
		caseOf(ReplyEvent{Step: "edit", Class: string(rails.ClassAnswer), FinishReason: "stop", InTokens: &in, OutTokens: &out,
			AnswerBytes: 10, ResponseBytes: 400, TTFTms: new(int64(310)), ElapsedMs: 900,
			ThinkingSwitch: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}},
			PromptFit:      &client.PromptFit{Context: 4096, Tokens: 300, Method: "counted", Counted: true, MaxTokens: 100}, Answer: "x := 1 <b>"}),
		caseOf(ReplyEvent{Step: "digest", Class: string(rails.ClassTruncated), ThinkingBytes: 3, Error: new("cut")}),
		caseOf(EmbedRequestEvent{Step: "embed", Model: "nomic", Inputs: 3}),
		caseOf(EmbedReplyEvent{Step: "embed", Vectors: 3, Base64: true, InTokens: &in, ElapsedMs: 12}),
		caseOf(EmbedReplyEvent{Step: "embed"}),
		caseOf(BaselineSkippedEvent{Verdict: BaselineSkipped}),
		caseOf(BaselineEvent{Verdict: "exit 1", DurationMs: 35, Tail: "FAIL\n"}),
		caseOf(SandboxEvent{Sandbox: "none", Why: "no bwrap"}),
		caseOf(MutantEvent{Mutation: "negate_condition", Line: 4, Desc: "if !x", Verdict: "exit 1", Rejected: true}),
		caseOf(VerifyStrengthEvent{Strength: "2/3", Made: 3, Run: 3, Rejected: 2, Survivors: []string{"line 4: x"}, ControlMs: 20, DurationMs: 80}),
		caseOf(VerifyStrengthEvent{Strength: "?", Unknown: "no mutant"}),
		caseOf(CommentsOnlyEvent{Strength: "?", CommentsOnly: true}),
		caseOf(GuardEvent{Guard: "restore"}),
		caseOf(GuardFailedEvent{Guard: "restore", Error: "gone"}),
		caseOf(RunEndEvent{Status: StatusOK, Model: new("qwen"), Receipt: "OK mode=transform",
			Details: json.RawMessage(`{"lines":"1-3","outcome":"kept","verify_exit":0}`), Host: &cost.Estimate{Method: "estimated"}, WallMs: 1500}),
		caseOf(RunEndEvent{Status: StatusRed, ExitCode: 1, Error: &ErrorInfo{Kind: "red", Message: "verify failed", Command: "x"}, Receipt: "RED"}),
		caseOf(VerdictEvent{Verdict: "accepted"}),
		caseOf(FileScopeEvent{File: "a.go", Verify: new("go test ./..."), Lines: "1-3", FileLines: 10, PromptBytes: 800}),
		caseOf(AttemptEvent{Attempt: 1, EditError: "no block"}),
		caseOf(AttemptEvent{Attempt: 2, Checks: "not one declaration"}),
		caseOf(DocKeptEvent{Attempt: 2, Lines: 3}),
		caseOf(AttemptEvent{Attempt: 3, Repeated: 1}),
		caseOf(AttemptEvent{Attempt: 4, Unchanged: true}),
		caseOf(AttemptEvent{Attempt: 5, SpanLines: new(3)}),
		caseOf(VerifyEvent{Attempt: 5, Verdict: "exit 0", DurationMs: 40, Tail: "ok"}),
		caseOf(VerifyWroteEvent{Step: "baseline", Files: []string{"a.go"}}),
		caseOf(VerifyWroteEvent{Step: "edit", Attempt: 5, Files: []string{"a.go"}}),
		caseOf(FileScopeEvent{File: "a.go", Verify: new("go test"), Lines: "1-3", FileLines: 10}),
		caseOf(ResponseFormatRefusedEvent{Error: "400"}),
		caseOf(DigestUnusableEvent{Attempt: 1, Error: "not json"}),
		caseOf(GateEvent{Supported: 2}),
		caseOf(EntriesEvent{Dir: "notes", Files: 12}),
		caseOf(MethodEvent{Method: "lexical"}),
		caseOf(EmbedModelEvent{Model: "nomic", Source: client.PickedEmbedSource}),
		caseOf(CacheEvent{Server: "ollama", Endpoint: "http://127.0.0.1:11434", Model: "nomic", File: "/c/embeddings.db"}),
		caseOf(CacheEvictedEvent{Vectors: 5, MaxBytes: 1 << 20}),
		caseOf(CacheErrorEvent{Error: "locked"}),
		caseOf(ScoredEvent{Files: 12, Pairs: 3, Cached: 4, Reused: 2, Method: "exact"}),
		caseOf(AgentScopeEvent{Base: "abc123", Verify: new("go test ./..."), PromptBytes: 900}),
		caseOf(ContextEvent{ContextWindow: new(int64(8192))}),
		caseOf(ContextEvent{}),
		caseOf(WorktreeEvent{Path: "/w", Branch: "locum/agent/x", Base: "abc123"}),
		caseOf(AssistantEvent{Turn: 1, Class: string(rails.ClassAnswer), ToolCalls: 2}),
		caseOf(NudgeEvent{Turn: 2, Reason: "empty"}),
		caseOf(ToolCallsDroppedEvent{Turn: 2, Ran: 16, Dropped: 1}),
		caseOf(ToolCallEvent{Turn: 1, ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}),
		caseOf(GuardrailBlockEvent{Turn: 1, ID: "c1", Name: "write_file", Rule: "outside", Reason: "outside the tree"}),
		caseOf(ToolResultEvent{Turn: 1, ID: "c1", Name: "read_file", OK: true, Bytes: 10, Result: "package a"}),
		caseOf(VerifyRoundEvent{Round: 1, Verdict: "exit 0", Exit: new(0), DurationMs: 50}),
		caseOf(VerifyRoundEvent{Round: 2, Verdict: "timed out", DurationMs: 50}),
		caseOf(FoldEvent{Turn: 3, Folded: 2, BeforeBytes: 9000, AfterBytes: 4000, LimitBytes: 8000}),
		caseOf(VerifyUndoneEvent{After: "verify", Files: []string{"a.go"}}),
		caseOf(AgentCommitEvent{Files: []string{}}),
		caseOf(AgentCommitEvent{Commit: new("def456"), Files: []string{"a.go"}, DiffStat: "1 file changed"}),
		caseOf(WorkflowEvent{Name: "fix", Pack: "local", Definition: "d0", Params: map[string]string{"pkg": "./x"}, Base: "abc123", Seal: new("s1")}),
		caseOf(WorkflowEvent{Name: "fix", Definition: "d0", Base: "abc123", ResumedFrom: new("20260101T000000Z-111111")}),
		caseOf(ServersEvent{Servers: []poolServer{{URL: "http://127.0.0.1:8080", Kind: "llama-server", Slots: 2, Capacity: 2}, {URL: "http://127.0.0.1:8081", Kind: "unknown", Capacity: 1}}, Jobs: 3}),
		caseOf(ItemStartEvent{Step: "edit", Index: 1, Item: "a.go", Server: "http://127.0.0.1:8080"}),
		caseOf(ItemEndEvent{Step: "edit", Index: 1, Item: "a.go", Server: "http://127.0.0.1:8080", RunID: new("r1"), Status: "OK", Outcome: "kept",
			Commit: new("c1"), Output: new("out"), Inputs: new("i1"), VerifyStrength: new("1/1"), Seal: new("s2")}),
		caseOf(ItemCarriedEvent{Step: "edit", Index: 2, Item: "b.go", Status: "reused"}),
		caseOf(CombineEvent{Step: "edit", Index: 1, Item: "a.go", Commit: "c1"}),
		caseOf(BranchCommitEvent{Commit: "h1", Branch: "locum/run/x"}),
		caseOf(DigestsEvent{Digests: map[string]string{"qwen": "sha256:1"}}),
	}
}

// emitted is what the journal writes of evs, one line each.
func emitted(t *testing.T, evs ...Event) [][]byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := OpenJournal(path, "20260102T030405Z-abcdef")
	require.NoError(t, err)
	j.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC) }
	for _, ev := range evs {
		j.Emit(ev)
	}
	require.NoError(t, j.Close())
	return fixtureLines(t, path)
}

func fixtureLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	require.NoError(t, sc.Err())
	return lines
}

// Each typed event is written byte for byte as the journal wrote it from a map before: a sealed
// journal's HMAC covers every byte, and readers of either locum read both.
func TestEventsWriteAsBefore(t *testing.T) {
	cases := fixtureEvents()
	want := fixtureLines(t, "testdata/events.jsonl")
	require.Len(t, want, len(cases))
	for i, c := range cases {
		got := emitted(t, c.ev)
		require.Len(t, got, 1)
		assert.Equal(t, string(want[i]), string(got[0]), "line %d: %T", i+1, c.ev)
	}
}

// A journal written before events had types decodes into them: each line read back into its
// type writes that line again (a value nothing types, such as a workflow's servers, with its
// object's keys sorted).
func TestEventsDecodeOldJournal(t *testing.T) {
	cases := fixtureEvents()
	evs, err := ReadJournal("testdata/events.jsonl")
	require.NoError(t, err)
	want := fixtureLines(t, "testdata/events.jsonl")
	require.Len(t, evs, len(cases))
	for i, c := range cases {
		got, ok := c.decode(evs[i])
		require.True(t, ok, "line %d: %T", i+1, c.ev)
		line := emitted(t, got)
		assert.JSONEq(t, string(want[i]), string(line[0]), "line %d: %T", i+1, c.ev)
	}
}

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   map[string]any
		want AttemptEvent
		ok   bool
	}{
		{"written", map[string]any{"event": "attempt", "attempt": 2.0, "span_lines": 3.0}, AttemptEvent{Attempt: 2, SpanLines: new(3)}, true},
		{"another kind", map[string]any{"event": "verify", "attempt": 2.0}, AttemptEvent{}, false},
		{"no kind", map[string]any{"attempt": 2.0}, AttemptEvent{}, false},
		// A value of another type leaves its field zero and the rest read.
		{"wrong type", map[string]any{"event": "attempt", "attempt": "two", "edit_error": "x"}, AttemptEvent{EditError: "x"}, true},
		{"too large", map[string]any{"event": "attempt", "attempt": 1e30, "unchanged": true}, AttemptEvent{Unchanged: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DecodeEvent[AttemptEvent](tt.ev)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// declaredKinds reads events.go and returns the kind each event type's Kind method returns.
func declaredKinds(t *testing.T) map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	require.NoError(t, err)
	kinds := map[string]bool{}
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Name.Name != "Kind" || len(fn.Body.List) != 1 {
			continue
		}
		ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
		require.True(t, ok, "a Kind method returns its kind")
		lit, ok := ret.Results[0].(*ast.BasicLit)
		require.True(t, ok && lit.Kind == token.STRING, "a Kind method returns a literal")
		kind, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		kinds[kind] = true
	}
	return kinds
}

// Every event kind a writer can emit is documented in spec/journal.md, and every kind documented
// there is one a writer can emit (the seal is the journal's own line).
func TestEveryEventKindIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../spec/journal.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	declared := declaredKinds(t)
	for _, want := range []string{"run_start", "attempt", "assistant", "tool_call", "fold", "item_carried", "run_end"} {
		assert.True(t, declared[want], "the scan finds %q", want)
	}
	for k := range declared {
		assert.True(t, documented[k], "event %q is declared but not documented in spec/journal.md", k)
	}
	for k := range documented {
		assert.True(t, declared[k] || k == "seal", "event %q is documented in spec/journal.md but has no type in events.go", k)
	}
}
