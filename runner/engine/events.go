package engine

import (
	"encoding/json"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
)

// The journal's events, as spec/journal.md documents them: one type for each shape a writer
// writes, its JSON tags the journal's field names. A writer journals one with Run.Emit and a
// reader takes one back with DecodeEvent, so both name a field through the same declaration.
//
// A field a writer always writes has no omitempty, whatever its value; a pointer is null where
// the writer wrote null. A field with omitempty is one the writer writes only where it holds
// something, and where that something may be zero it is a pointer. An event line's keys are
// sorted whatever the order of the fields here, as they were when each event was a map; a nested
// object keeps the order of its own type's fields.
//
// They live with the journal rather than beside journal.md in spec: run_start, run_end, a reply
// and a workflow's servers hold values of the packages spec sits below (packs' settings, the
// client's prompt fit, the host estimate, this package's error info), and engine is the lowest
// package every mode and every reader of a journal already imports.

// Event is one event of a run's journal: its fields, and Kind, the name the journal gives it.
type Event interface {
	Kind() string
}

// RunStartEvent opens every run's journal.
type RunStartEvent struct {
	JournalVersion int             `json:"journal_version"`
	Mode           string          `json:"mode"`
	Model          string          `json:"model"`
	Routing        string          `json:"routing"`
	Settings       []packs.Setting `json:"settings"`
	Args           []string        `json:"args"`
	Version        string          `json:"version"`
	Root           string          `json:"root"`
	Parent         *ParentRun      `json:"parent"`
}

// StepEvent says a step of the mode's workflow starts.
type StepEvent struct {
	Step string `json:"step"`
}

// StepFailedEvent is a step that ended the run with an error.
type StepFailedEvent struct {
	Step  string `json:"step"`
	Error string `json:"error"`
}

// RequestEvent is one chat request as sent.
type RequestEvent struct {
	Step         string `json:"step"`
	Model        string `json:"model"`
	PromptBytes  int    `json:"prompt_bytes"`
	PromptSHA256 string `json:"prompt_sha256"`
	MaxTokens    int64  `json:"max_tokens"`
	// MaxTokensAsked is the reply room asked for, where fitting the prompt to the context
	// lowered it.
	MaxTokensAsked *int64   `json:"max_tokens_asked,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	Seed           *int64   `json:"seed,omitempty"`
	Effort         string   `json:"effort"`
	Stream         bool     `json:"stream"`
}

// EmbedRequestEvent is one batch of embeddings asked for.
type EmbedRequestEvent struct {
	Step   string `json:"step"`
	Model  string `json:"model"`
	Inputs int    `json:"inputs"`
}

// ReplyEvent is a chat reply the server gave. A figure the server did not report is null.
type ReplyEvent struct {
	Step           string            `json:"step"`
	Class          string            `json:"class"`
	FinishReason   string            `json:"finish_reason"`
	InTokens       *int64            `json:"in_tokens"`
	OutTokens      *int64            `json:"out_tokens"`
	AnswerBytes    int               `json:"answer_bytes"`
	ThinkingBytes  int               `json:"thinking_bytes"`
	ResponseBytes  int               `json:"response_bytes"`
	TTFTms         *int64            `json:"ttft_ms"`
	ElapsedMs      int64             `json:"elapsed_ms"`
	ThinkingSwitch map[string]any    `json:"thinking_switch"`
	PromptFit      *client.PromptFit `json:"prompt_fit"`
	Answer         string            `json:"answer"`
	Error          *string           `json:"error"`
}

// ReplyFailedEvent is a chat request that got no reply: Sent is false where none went out (the
// probe failed, the prompt was refused for the context, or the tools for the model), and absent
// where one went out and failed.
type ReplyFailedEvent struct {
	Step  string  `json:"step"`
	Error *string `json:"error"`
	Sent  *bool   `json:"sent,omitempty"`
}

// EmbedReplyEvent is a batch of embeddings the server gave.
type EmbedReplyEvent struct {
	Step      string `json:"step"`
	Vectors   int    `json:"vectors"`
	Base64    bool   `json:"base64"`
	InTokens  *int64 `json:"in_tokens"`
	ElapsedMs int64  `json:"elapsed_ms"`
}

// EmbedFittedEvent is an input longer than the embedding model takes at once, embedded in pieces
// whose vectors were pooled into one.
type EmbedFittedEvent struct {
	Step   string `json:"step"`
	File   string `json:"file"`
	Pieces int    `json:"pieces"`
	Bytes  int    `json:"bytes"`
}

// CapabilitiesEvent says the server could not say what the model does.
type CapabilitiesEvent struct {
	Step         string `json:"step"`
	Model        string `json:"model"`
	Capabilities string `json:"capabilities"`
	Error        string `json:"error"`
}

// BaselineEvent is the verify run once on the tree before any change.
type BaselineEvent struct {
	Verdict    string `json:"verdict"`
	DurationMs int64  `json:"duration_ms"`
	Tail       string `json:"tail"`
}

// BaselineSkippedEvent is a baseline the run did not take (BaselineSkipped).
type BaselineSkippedEvent struct {
	Verdict string `json:"verdict"`
}

// SandboxEvent says the verify ran without the sandbox, and why.
type SandboxEvent struct {
	Sandbox string `json:"sandbox"`
	Why     string `json:"why"`
}

// MutantEvent is the verify run on one mutant of a kept span.
type MutantEvent struct {
	Mutation string `json:"kind"`
	Line     int    `json:"line"`
	Desc     string `json:"desc"`
	Verdict  string `json:"verdict"`
	Rejected bool   `json:"rejected"`
}

// VerifyStrengthEvent is how many of a kept span's mutants the verify rejected.
type VerifyStrengthEvent struct {
	Strength   string   `json:"strength"`
	Made       int      `json:"made"`
	Run        int      `json:"run"`
	Rejected   int      `json:"rejected"`
	Survivors  []string `json:"survivors"`
	Unknown    string   `json:"unknown"`
	ControlMs  int64    `json:"control_ms"`
	DurationMs int64    `json:"duration_ms"`
}

// CommentsOnlyEvent is a kept edit that changed comments alone, so no mutant was made.
type CommentsOnlyEvent struct {
	Strength     string `json:"strength"`
	CommentsOnly bool   `json:"comments_only"`
}

// GuardEvent is a guard run on the way out.
type GuardEvent struct {
	Guard string `json:"guard"`
}

// GuardFailedEvent is a guard that failed.
type GuardFailedEvent struct {
	Guard string `json:"guard"`
	Error string `json:"error"`
}

// RunEndEvent closes every run's journal. Details are the result's, their keys sorted (or what
// the mode's details keep for the journal, where they keep less); a reader decodes them with
// DecodeDetails into the mode's details type.
type RunEndEvent struct {
	Status   Status          `json:"status"`
	ExitCode int             `json:"exit_code"`
	Error    *ErrorInfo      `json:"error"`
	Model    *string         `json:"model"`
	Receipt  string          `json:"receipt"`
	Details  json.RawMessage `json:"details"`
	Host     *cost.Estimate  `json:"host"`
	WallMs   int64           `json:"wall_ms"`
}

// VerdictEvent is a person's word on an ended run, appended by locum runs accept or reject.
type VerdictEvent struct {
	Verdict string `json:"verdict"`
}

// FileScopeEvent is the file and span a transform or a verify-check works on. PromptBytes is a
// transform's alone. Verify is nil only in a journal written before scope named it.
type FileScopeEvent struct {
	File        string  `json:"file"`
	Verify      *string `json:"verify"`
	Lines       string  `json:"lines"`
	FileLines   int     `json:"file_lines"`
	PromptBytes int     `json:"prompt_bytes,omitempty"`
	// Task is a transform's task as given; Base the commit its repository's HEAD was at and
	// FileSHA256 the file's bytes as read, where the run's root is a repository's top level with
	// a commit: what a bench needs to replay the run (locum bench --from-journal).
	Task       string `json:"task,omitempty"`
	Base       string `json:"base,omitempty"`
	FileSHA256 string `json:"file_sha256,omitempty"`
}

// AttemptEvent is one reply of a transform read as an edit. Exactly one of the others is set:
// SpanLines where the edit was written, EditError where it could not be applied, Unchanged
// where it left the span as it was, Repeated where it repeats an earlier rejected reply, Checks
// where it failed the checks before the verify. Only a written edit changed the file.
type AttemptEvent struct {
	Attempt   int    `json:"attempt"`
	SpanLines *int   `json:"span_lines,omitempty"`
	EditError string `json:"edit_error,omitempty"`
	Unchanged bool   `json:"unchanged,omitempty"`
	Repeated  int    `json:"repeated,omitempty"`
	Checks    string `json:"checks,omitempty"`
}

// Wrote says the attempt wrote its edit to the file.
func (a AttemptEvent) Wrote() bool { return a.SpanLines != nil }

// DocKeptEvent is a --symbol reply without a doc comment given the declaration's.
type DocKeptEvent struct {
	Attempt int `json:"attempt"`
	Lines   int `json:"lines"`
}

// PackageDroppedEvent is a reply to a declaration's span whose leading package clause, which
// the span has none of, was taken off before the reply was applied.
type PackageDroppedEvent struct {
	Attempt int    `json:"attempt"`
	Clause  string `json:"clause"`
}

// VerifyEvent is the verify run on a transform's attempt. ExitCode is never written: a journal
// from before verdicts were words named the verify's exit code alone.
type VerifyEvent struct {
	Attempt    int    `json:"attempt"`
	Verdict    string `json:"verdict"`
	DurationMs int64  `json:"duration_ms"`
	Tail       string `json:"tail"`
	ExitCode   *int   `json:"exit_code,omitempty"`
}

// VerifyRoundEvent is a verify gate: an agent's after finish, a workflow's final verify. Exit is
// null where the verify did not exit.
type VerifyRoundEvent struct {
	Round      int    `json:"round"`
	Verdict    string `json:"verdict"`
	Exit       *int   `json:"exit"`
	DurationMs int64  `json:"duration_ms"`
	Tail       string `json:"tail"`
}

// VerifyWroteEvent is a verify that changed the file it judged; Attempt is an edit's.
type VerifyWroteEvent struct {
	Step    string   `json:"step"`
	Attempt int      `json:"attempt,omitempty"`
	Files   []string `json:"files"`
}

// ResponseFormatRefusedEvent is a server that refused response_format.
type ResponseFormatRefusedEvent struct {
	Error string `json:"error"`
}

// DigestUnusableEvent is a digest reply that could not be read.
type DigestUnusableEvent struct {
	Attempt int    `json:"attempt"`
	Error   string `json:"error"`
}

// GateEvent is the evidence gate's count of a digest's claims.
type GateEvent struct {
	Supported   int `json:"supported"`
	Unsupported int `json:"unsupported"`
}

// EntriesEvent is the folder a dedup screens.
type EntriesEvent struct {
	Dir   string `json:"dir"`
	Files int    `json:"files"`
}

// MethodEvent is a dedup that compares words rather than embeddings, and why.
type MethodEvent struct {
	Method string `json:"method"`
	Why    string `json:"why"`
}

// EmbedModelEvent is the embedding model picked from what the server lists.
type EmbedModelEvent struct {
	Model  string `json:"model"`
	Source string `json:"source"`
}

// ModelUncheckedEvent is a chat model sent although the server does not list it: where the
// server lists no model, so the name could not be checked, or where the operator sent it anyway
// (allow_unlisted_model).
type ModelUncheckedEvent struct {
	Model  string   `json:"model"`
	Listed []string `json:"listed"`
	Why    string   `json:"why"`
}

// CacheEvent is the key of the embedding cache and its file.
type CacheEvent struct {
	Server   string `json:"server"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Digest   string `json:"digest"`
	File     string `json:"file"`
}

// CacheEvictedEvent is the vectors evicted as the cache passed its size.
type CacheEvictedEvent struct {
	Vectors  int   `json:"vectors"`
	MaxBytes int64 `json:"max_bytes"`
}

// CacheErrorEvent is an embedding cache that could not be read or written.
type CacheErrorEvent struct {
	Error string `json:"error"`
}

// ScoredEvent is a dedup's screen scored.
type ScoredEvent struct {
	Files  int    `json:"files"`
	Pairs  int    `json:"pairs"`
	Groups int    `json:"groups"`
	Cached int    `json:"cached"`
	Reused int    `json:"reused"`
	Method string `json:"method"`
}

// AgentScopeEvent is what an agent run starts from. Verify is a pointer as FileScopeEvent's is,
// so a reader of either kind of scope reads it alike.
type AgentScopeEvent struct {
	Base        string  `json:"base"`
	Verify      *string `json:"verify"`
	PromptBytes int     `json:"prompt_bytes"`
	// Task is the task as given; absent in a journal written before scope named it.
	Task string `json:"task,omitempty"`
}

// ContextEvent is the loaded model's context, null where the server does not say.
type ContextEvent struct {
	ContextWindow *int64 `json:"context_window"`
}

// WorktreeEvent is the worktree and branch an agent or a workflow works on.
type WorktreeEvent struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
}

// AssistantEvent is one reply of the agent's model.
type AssistantEvent struct {
	Turn      int    `json:"turn"`
	Class     string `json:"class"`
	Content   string `json:"content"`
	ToolCalls int    `json:"tool_calls"`
	TextCalls bool   `json:"text_calls"`
}

// NudgeEvent is a reply with no usable tool call, nudged once.
type NudgeEvent struct {
	Turn   int    `json:"turn"`
	Reason string `json:"reason"`
	// Class is never written: an older agent's journal named the nudge's reason here.
	Class string `json:"class,omitempty"`
}

// ToolCallsDroppedEvent is a reply with more tool calls than a turn runs.
type ToolCallsDroppedEvent struct {
	Turn    int `json:"turn"`
	Ran     int `json:"ran"`
	Dropped int `json:"dropped"`
}

// ToolCallEvent is one tool call of the agent's model.
type ToolCallEvent struct {
	Turn      int    `json:"turn"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// GuardrailBlockEvent is a tool call a guardrail refused.
type GuardrailBlockEvent struct {
	Turn   int    `json:"turn"`
	ID     string `json:"id"`
	Name   string `json:"name"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// Guardrail is never written: an older agent's journal named the refusal here.
	Guardrail string `json:"guardrail,omitempty"`
}

// ToolResultEvent is what a tool call returned to the model.
type ToolResultEvent struct {
	Turn    int    `json:"turn"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Bytes   int    `json:"bytes"`
	Changed bool   `json:"changed"`
	Result  string `json:"result"`
}

// FoldEvent is old tool results folded into one-line summaries to fit the context.
type FoldEvent struct {
	Turn        int `json:"turn"`
	Folded      int `json:"folded"`
	BeforeBytes int `json:"before_bytes"`
	AfterBytes  int `json:"after_bytes"`
	LimitBytes  int `json:"limit_bytes"`
}

// VerifyUndoneEvent is what a verify changed of the files a commit could take, put back.
type VerifyUndoneEvent struct {
	After string   `json:"after"`
	Files []string `json:"files"`
}

// AgentCommitEvent is an agent's commit; Commit is null where nothing changed, and DiffStat is
// written with a commit alone.
type AgentCommitEvent struct {
	Commit   *string  `json:"commit"`
	Files    []string `json:"files"`
	DiffStat string   `json:"diff_stat,omitempty"`
}

// WorkflowEvent opens a workflow run: the workflow, its definition's fingerprint and its seal.
type WorkflowEvent struct {
	Name        string            `json:"name"`
	Pack        string            `json:"pack"`
	Definition  string            `json:"definition"`
	Params      map[string]string `json:"params"`
	Base        string            `json:"base"`
	ResumedFrom *string           `json:"resumed_from"`
	Seal        *string           `json:"seal"`
}

// ServersEvent is a workflow's pool of servers. Servers is the workflow's own list, which sits
// above this package; nothing reads it back.
type ServersEvent struct {
	Servers any `json:"servers"`
	Jobs    int `json:"jobs"`
}

// ItemsEvent is a workflow step's items.
type ItemsEvent struct {
	Step  string   `json:"step"`
	Mode  string   `json:"mode"`
	Count int      `json:"count"`
	Items []string `json:"items"`
}

// ItemStartEvent is a workflow item started on a server.
type ItemStartEvent struct {
	Step   string `json:"step"`
	Index  int    `json:"index"`
	Item   string `json:"item"`
	Server string `json:"server"`
}

// ItemEndEvent is a workflow item ended; each text it did not have is null.
type ItemEndEvent struct {
	Step           string  `json:"step"`
	Index          int     `json:"index"`
	Item           string  `json:"item"`
	Server         string  `json:"server"`
	RunID          *string `json:"run_id"`
	Status         string  `json:"status"`
	Outcome        string  `json:"outcome"`
	Commit         *string `json:"commit"`
	Output         *string `json:"output"`
	Inputs         *string `json:"inputs"`
	VerifyStrength *string `json:"verify_strength"`
	// Baseline is what the item's verify said of the tree before its edit (red, green, skipped);
	// absent where its run did not reach it.
	Baseline *string `json:"baseline,omitempty"`
	Seal     *string `json:"seal"`
}

// ItemCarriedEvent is a resumed run's green item, as ItemEndEvent has it, taken into this run.
type ItemCarriedEvent ItemEndEvent

// CombineEvent is a green item's change applied, or not, on the workflow's branch.
type CombineEvent struct {
	Step     string `json:"step"`
	Index    int    `json:"index"`
	Item     string `json:"item"`
	Commit   string `json:"commit"`
	Conflict bool   `json:"conflict"`
}

// BranchCommitEvent is a workflow's branch offered once its final verify passed.
type BranchCommitEvent struct {
	Commit string `json:"commit"`
	Branch string `json:"branch"`
}

// HandoffEvent is a red run's handoff as its result carried it, and what its use is measured on.
type HandoffEvent struct {
	Handoff *Handoff      `json:"handoff"`
	Files   []HandoffFile `json:"files"`
}

// HandoffUseEvent is what became of a red run's handoff, appended to its journal: a mark a person
// or the host gave (Source mark), or a measure a later run made as it read the file (Source
// measured, By that run), with the lines found (Present) of those looked for (Of).
type HandoffUseEvent struct {
	Use     string `json:"use"`
	Source  string `json:"source"`
	Present *int   `json:"present,omitempty"`
	Of      *int   `json:"of,omitempty"`
	By      string `json:"by,omitempty"`
	Why     string `json:"why,omitempty"`
}

// BenchEvent opens a bench run: the models it compares, where its tasks come from, each task's
// key and fingerprint, and its seal, which a resume checks before it takes anything of the run.
type BenchEvent struct {
	// Models are the models named; empty for every chat model the pool's servers list.
	Models []string `json:"models"`
	// Evals says the pack's eval tasks are among the tasks; Folder is the bench folder as the
	// operator named it ("" for none); Replay the runs replayed, of ReplayMode.
	Evals       bool        `json:"evals"`
	Folder      string      `json:"folder"`
	Replay      []string    `json:"replay"`
	ReplayMode  string      `json:"replay_mode"`
	Tasks       []BenchTask `json:"tasks"`
	ResumedFrom *string     `json:"resumed_from"`
	Seal        *string     `json:"seal"`
}

// BenchTask is one task of a bench: its key and the fingerprint of what its cells are asked.
type BenchTask struct {
	Key         string `json:"key"`
	Source      string `json:"source"`
	Fingerprint string `json:"fingerprint"`
}

// BenchModelsEvent is the models a bench runs, each with the servers of its pool that list it and
// the weights they serve under its name.
type BenchModelsEvent struct {
	Models []BenchModel `json:"models"`
}

// BenchModel is one model a bench runs and where.
type BenchModel struct {
	Model   string   `json:"model"`
	Servers []string `json:"servers"`
	// Weights is the weights as the first server listing the model describes them; "" where it
	// says nothing that tells one set of weights from another.
	Weights string `json:"weights"`
}

// BenchCell is one cell of a bench: a task asked of a model on a server of the pool, and what
// became of it. A figure the server did not report is null.
type BenchCell struct {
	Task   string `json:"task"`
	Model  string `json:"model"`
	Server string `json:"server"`
	// Fingerprint is the task's, as the bench event has it.
	Fingerprint string `json:"fingerprint"`
	// RunID is the cell's own run; "" where none began.
	RunID string `json:"run_id"`
	// Status is the cell run's (OK, RED, REFUSED, ERROR); Kind its error's kind, "" for OK.
	Status  string `json:"status"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	// Shown is what a kept change's green verify showed by its baseline (fixed, held); "" where
	// nothing was kept or the baseline was skipped.
	Shown string `json:"shown"`
	// Right is the oracle's word on a kept change: true right, false wrong, null where no oracle
	// judged; Oracle says which oracle and what it said.
	Right  *bool  `json:"right"`
	Oracle string `json:"oracle"`
	WallMs int64  `json:"wall_ms"`
	TTFTms *int64 `json:"ttft_ms"`
	// Rate is the decode rate, tokens a second, as the server's timings give it.
	Rate      *float64 `json:"rate"`
	InTokens  *int64   `json:"in_tokens"`
	OutTokens *int64   `json:"out_tokens"`
	// Saved is what the host would have saved delegating the task to this model, by the
	// ledger's cost model; null for a task that is no delegation (an eval task's prompt).
	Saved *cost.Summary `json:"saved"`
	// Weights are the model's weights as the cell's server describes them.
	Weights string `json:"weights"`
}

// CellStartEvent is a bench's cell started on a server of the pool.
type CellStartEvent struct {
	Task   string `json:"task"`
	Model  string `json:"model"`
	Server string `json:"server"`
}

// CellEndEvent is a bench's cell ended, sealed for a resume to take it.
type CellEndEvent struct {
	BenchCell
	Seal *string `json:"seal"`
}

// CellCarriedEvent is a resumed bench's cell, as CellEndEvent has it, taken into this run.
type CellCarriedEvent CellEndEvent

// DigestsEvent is the weights' digests of the models an A/B capture measures.
type DigestsEvent struct {
	Digests map[string]string `json:"digests"`
}

func (RunStartEvent) Kind() string              { return "run_start" }
func (StepEvent) Kind() string                  { return "step" }
func (StepFailedEvent) Kind() string            { return "step_failed" }
func (RequestEvent) Kind() string               { return "request" }
func (EmbedRequestEvent) Kind() string          { return "request" }
func (ReplyEvent) Kind() string                 { return "reply" }
func (ReplyFailedEvent) Kind() string           { return "reply" }
func (EmbedReplyEvent) Kind() string            { return "reply" }
func (EmbedFittedEvent) Kind() string           { return "embed_fitted" }
func (CapabilitiesEvent) Kind() string          { return "capabilities" }
func (BaselineEvent) Kind() string              { return "baseline" }
func (BaselineSkippedEvent) Kind() string       { return "baseline" }
func (SandboxEvent) Kind() string               { return "sandbox" }
func (MutantEvent) Kind() string                { return "mutant" }
func (VerifyStrengthEvent) Kind() string        { return "verify_strength" }
func (CommentsOnlyEvent) Kind() string          { return "verify_strength" }
func (GuardEvent) Kind() string                 { return "guard" }
func (GuardFailedEvent) Kind() string           { return "guard_failed" }
func (RunEndEvent) Kind() string                { return "run_end" }
func (VerdictEvent) Kind() string               { return "verdict" }
func (FileScopeEvent) Kind() string             { return "scope" }
func (AttemptEvent) Kind() string               { return "attempt" }
func (DocKeptEvent) Kind() string               { return "doc_kept" }
func (PackageDroppedEvent) Kind() string        { return "package_dropped" }
func (VerifyEvent) Kind() string                { return "verify" }
func (VerifyRoundEvent) Kind() string           { return "verify" }
func (VerifyWroteEvent) Kind() string           { return "verify_wrote" }
func (ResponseFormatRefusedEvent) Kind() string { return "response_format_refused" }
func (DigestUnusableEvent) Kind() string        { return "digest_unusable" }
func (GateEvent) Kind() string                  { return "gate" }
func (EntriesEvent) Kind() string               { return "entries" }
func (MethodEvent) Kind() string                { return "method" }
func (EmbedModelEvent) Kind() string            { return "embed_model" }
func (ModelUncheckedEvent) Kind() string        { return "model_unchecked" }
func (CacheEvent) Kind() string                 { return "cache" }
func (CacheEvictedEvent) Kind() string          { return "cache_evicted" }
func (CacheErrorEvent) Kind() string            { return "cache_error" }
func (ScoredEvent) Kind() string                { return "scored" }
func (AgentScopeEvent) Kind() string            { return "scope" }
func (ContextEvent) Kind() string               { return "context" }
func (WorktreeEvent) Kind() string              { return "worktree" }
func (AssistantEvent) Kind() string             { return "assistant" }
func (NudgeEvent) Kind() string                 { return "nudge" }
func (ToolCallsDroppedEvent) Kind() string      { return "tool_calls_dropped" }
func (ToolCallEvent) Kind() string              { return "tool_call" }
func (GuardrailBlockEvent) Kind() string        { return "guardrail_block" }
func (ToolResultEvent) Kind() string            { return "tool_result" }
func (FoldEvent) Kind() string                  { return "fold" }
func (VerifyUndoneEvent) Kind() string          { return "verify_undone" }
func (AgentCommitEvent) Kind() string           { return "commit" }
func (WorkflowEvent) Kind() string              { return "workflow" }
func (ServersEvent) Kind() string               { return "servers" }
func (ItemsEvent) Kind() string                 { return "items" }
func (ItemStartEvent) Kind() string             { return "item_start" }
func (ItemEndEvent) Kind() string               { return "item_end" }
func (ItemCarriedEvent) Kind() string           { return "item_carried" }
func (CombineEvent) Kind() string               { return "combine" }
func (BranchCommitEvent) Kind() string          { return "commit" }
func (DigestsEvent) Kind() string               { return "digests" }
func (BenchEvent) Kind() string                 { return "bench" }
func (BenchModelsEvent) Kind() string           { return "bench_models" }
func (CellStartEvent) Kind() string             { return "cell_start" }
func (CellEndEvent) Kind() string               { return "cell_end" }
func (CellCarriedEvent) Kind() string           { return "cell_carried" }
func (HandoffEvent) Kind() string               { return "handoff" }
func (HandoffUseEvent) Kind() string            { return "handoff_use" }
