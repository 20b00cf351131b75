package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/analyze"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/dedup"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/ledger"
	"github.com/locumdev/locum/runner/summarize"
	"github.com/locumdev/locum/runner/transform"
	"github.com/locumdev/locum/runner/verifycheck"
	"github.com/locumdev/locum/untrusted"
	"github.com/locumdev/locum/workflow"
)

// The arguments of each tool are the CLI's flags in snake_case; a setting named here goes through
// the same cascade as the flag (default, packs, workspace, LOCUM_* environment, then the call).
// allow_remote is never an argument: only the operator widens the loopback rail.

// StatusArgs are the arguments of the status tool.
type StatusArgs struct {
	BaseURL    string `json:"base_url,omitempty"`
	Model      string `json:"model,omitempty" jsonschema:"a chat model"`
	EmbedModel string `json:"embed_model,omitempty" jsonschema:"an embedding model"`
}

// ModelArgs are the arguments of every tool that asks a chat model: which model, where, and
// the rails of its requests.
type ModelArgs struct {
	Role              string `json:"role,omitempty" jsonschema:"code (default) or prose"`
	Model             string `json:"model,omitempty" jsonschema:"only a model the person named"`
	BaseURL           string `json:"base_url,omitempty"`
	MaxInputBytes     *int   `json:"max_input_bytes,omitempty"`
	MaxOutputTokens   *int   `json:"max_output_tokens,omitempty"`
	Effort            string `json:"effort,omitempty" jsonschema:"none, low, medium or high"`
	Timeout           string `json:"timeout,omitempty" jsonschema:"such as 10m"`
	FirstTokenTimeout string `json:"first_token_timeout,omitempty" jsonschema:"such as 2m"`
}

// TransformArgs are the arguments of the transform tool.
type TransformArgs struct {
	File   string `json:"file"`
	Lines  string `json:"lines,omitempty" jsonschema:"A-B or A-; default all"`
	Symbol string `json:"symbol,omitempty" jsonschema:"or a Go declaration, such as Type.Method"`
	Verify string `json:"verify" jsonschema:"bash, from the repo root; fails until the task is done"`
	Task   string `json:"task" jsonschema:"what to change, in plain words"`
	ModelArgs
	MaxAttempts   *int   `json:"max_attempts,omitempty" jsonschema:"1 to 20"`
	EditFormat    string `json:"edit_format,omitempty" jsonschema:"span, blocks or insert"`
	EditGuard     string `json:"edit_guard,omitempty" jsonschema:"span, signature or comments"`
	VerifyTimeout string `json:"verify_timeout,omitempty" jsonschema:"such as 5m"`
	ExpectRed     bool   `json:"expect_red,omitempty" jsonschema:"refuse if verify passes already"`
	NoBaseline    bool   `json:"no_baseline,omitempty" jsonschema:"no verify run before the edit"`
	HostHoldsSpan bool   `json:"host_holds_span,omitempty" jsonschema:"you read the span already"`
	HostArgs
}

// SummarizeArgs are the arguments of the summarize tool.
type SummarizeArgs struct {
	File   string `json:"file"`
	Lines  string `json:"lines,omitempty" jsonschema:"A-B or A-; default all"`
	Symbol string `json:"symbol,omitempty" jsonschema:"or a Go declaration, such as Type.Method"`
	Focus  string `json:"focus,omitempty" jsonschema:"what the digest should be about"`
	ModelArgs
	MaxWords *int `json:"max_words,omitempty"`
	HostArgs
}

// VerifyCheckArgs are the arguments of the verify_check tool.
type VerifyCheckArgs struct {
	File   string `json:"file"`
	Lines  string `json:"lines,omitempty"`
	Symbol string `json:"symbol,omitempty"`
	Verify string `json:"verify"`
}

// HostArgs are what the host says of its own session, for the host-cost estimate.
type HostArgs struct {
	HostTurnsLeft     *int `json:"host_turns_left,omitempty" jsonschema:"default 10"`
	HostContextTokens *int `json:"host_context_tokens,omitempty" jsonschema:"your context; default 44000"`
}

// DedupArgs are the arguments of the dedup tool.
type DedupArgs struct {
	Dir           string   `json:"dir"`
	Threshold     *float64 `json:"threshold,omitempty" jsonschema:"default 0.8 (embedding), 0.5 (lexical)"`
	Pairs         bool     `json:"pairs,omitempty" jsonschema:"list the pairs instead of groups"`
	Model         string   `json:"model,omitempty" jsonschema:"the embedding model"`
	Method        string   `json:"method,omitempty" jsonschema:"embedding, lexical (no server) or auto"`
	Exact         string   `json:"exact,omitempty" jsonschema:"true, false (LSH) or auto"`
	Glob          string   `json:"glob,omitempty" jsonschema:"default *.md"`
	BatchSize     *int     `json:"batch_size,omitempty"`
	MaxInputBytes *int     `json:"max_input_bytes,omitempty"`
	NoCache       bool     `json:"no_cache,omitempty"`
	BaseURL       string   `json:"base_url,omitempty"`
	Timeout       string   `json:"timeout,omitempty" jsonschema:"such as 10m"`
	HostArgs
}

// RunArgs are the arguments of the run tool.
type RunArgs struct {
	Workflow string            `json:"workflow,omitempty" jsonschema:"go-doc, go-tidy, notes-digest or the workspace's"`
	Params   map[string]string `json:"params,omitempty" jsonschema:"such as {\"dir\": \"pkg/calc\"}"`
	Resume   string            `json:"resume,omitempty" jsonschema:"instead of workflow: an interrupted run's run_id"`
	Jobs     *int              `json:"jobs,omitempty" jsonschema:"items at once"`
	Model    string            `json:"model,omitempty" jsonschema:"only a model the person named"`
	HostArgs
}

// RunsShowArgs are the arguments of the runs_show tool.
type RunsShowArgs struct {
	RunID string `json:"run_id" jsonschema:"a result's run_id, or a unique prefix"`
}

// LedgerArgs are the arguments of the ledger tool.
type LedgerArgs struct {
	By    string `json:"by,omitempty" jsonschema:"model, mode (default), role or week"`
	Since string `json:"since,omitempty" jsonschema:"7d, 36h or 2026-11-01"`
	Mode  string `json:"mode,omitempty"`
}

// RunEvents is one run's journal.
type RunEvents struct {
	Journal string           `json:"journal"`
	Events  []map[string]any `json:"events"`
	// Sealed says locum can show it wrote the journal; Cut why not every event is here.
	Sealed bool   `json:"sealed"`
	Cut    string `json:"cut,omitempty"`
}

// addTools declares the tools. A host keeps every byte of the list in its context on every turn
// of every session, so each description says when to call the tool and what comes back, and no
// more: a refusal's or a verdict's own text says why and what to do. No tool declares an output
// schema: the structured content of the four modes is locum's --json result, which
// spec/result.schema.json publishes, and the other three's are the objects of the commands'
// --json; the tests hold each to its contract. Each handler returns its object as any: a call
// refused before it ran has none, where a typed one would make the SDK send a zero object.
func (s *Server) addTools() error {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "status",
		Description: "Is a local model server up, and which models does it list? Call it before the other tools; " +
			"it sends no prompt. isError when none answers (the text says what starts one) or the endpoint is off this machine.",
		Annotations: readOnly,
	}, s.status)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "transform",
		Description: "Edit one span of one file with the local model, kept only if `verify` exits 0 (exit 1 retries " +
			"with its output; anything else, or a cancel, restores the file). For a bounded edit a command can check. " +
			"Returns a line (status, outcome, saving) and locum's --json result (details.changes: the edit). " +
			"isError: RED (file unchanged), REFUSED (nothing sent; error.command is for the person to run), ERROR.",
		// A kept edit replaces lines of a file: destructive, for a host that asks before such calls.
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, s.transform)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "verify_check",
		Description: "Can a transform's verify fail on its span? Runs it on small changes to it in a scratch copy; no model. " +
			"RED if it rejects none.",
		Annotations: readOnly,
	}, s.verifyCheck)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "summarize",
		Description: "A digest of a file span by the local model, when reading the span would cost you more than it is " +
			"worth. Each claim cites lines and a quote; trust only claims marked supported, and open their lines " +
			"before acting on one. Returns locum's --json result; isError: RED when no claim is supported, or REFUSED.",
		Annotations: readOnly,
	}, s.summarize)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "dedup",
		Description: "Screen a folder of notes for near-duplicates by embeddings (or words: method lexical). Returns " +
			"locum's --json result: details.groups, files whose pairs score at or above threshold. A group is a " +
			"candidate to judge, not a verdict.",
		Annotations: readOnly,
	}, s.dedup)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "run",
		Description: "Run a pack's workflow: one edit or digest over many declarations or files in one call (not many " +
			"transform calls). Each item is verified in its own worktree; green edits are combined on " +
			"details.branch and verified again, never in your tree: read it with runs_show, then ask the person to run " +
			"locum runs accept RUN_ID. RED when an item or the final verify was not green.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.runWorkflow)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name:        "runs_show",
		Description: "Read a run's journal: its settings, each request and reply, each verify's verdict and output. To see why a run went red.",
		Annotations: readOnly,
	}, s.runsShow)
	sdk.AddTool(s.sdk, &sdk.Tool{
		Name: "ledger",
		Description: "What delegation saved or cost you in this repository (estimated): runs, keep rate, tokens net of " +
			"losses, and each mode and role's break-even, as locum ledger --json.",
		Annotations: readOnly,
	}, s.ledger)
	return nil
}

func (s *Server) ledger(_ context.Context, _ *sdk.CallToolRequest, args LedgerArgs) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	f := ledger.Filter{Mode: args.Mode}
	if args.Since != "" {
		t, err := analyze.ParseSince(args.Since, time.Now())
		if err != nil {
			return fail("ERROR: since: %v", err), nil, nil
		}
		f.Since = t
	}
	res, err := s.jobs.Ledger(job.LedgerRequest{Filter: f, By: args.By})
	if err != nil {
		return fail("ERROR: %v", err), nil, nil
	}
	rep := res.Report
	t := rep.Total
	text := fmt.Sprintf("%d runs, %d kept; saved you net of losses: %s, %+d tokens (estimated)", t.Runs, t.Kept, cost.Money(t.USD), t.Net)
	if h := t.Host; h != nil {
		text += fmt.Sprintf("; measured from your own usage: %d runs joined to your calls, their turns %d tokens, $%.4f; your context around them %d tokens",
			h.Joined, h.Tokens, h.USD, h.Context)
	}
	if w := t.StrengthWords(); w != "" {
		text += "; verify strength: " + w
	}
	if w := rep.Left.Words(); w != "" {
		text += "; " + w
	}
	for _, r := range rep.BreakEven {
		text += "; " + untrusted.Escape(r.Words())
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, rep, nil
}

func ptr[T any](v T) *T { return &v }

// fail is a tool result with isError: a refusal or a verdict the host model reads, never a
// protocol error.
func fail(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// callArgs are a call's arguments that set mode's settings, keyed by setting (an argument is
// named as the setting's flag in snake_case: dedup's model is embed_model); they resolve on top
// of the operator's flags. allow_remote never comes from a call.
func (s *Server) callArgs(mode string, args any) (map[string]string, error) {
	data, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var given map[string]any
	if err := json.Unmarshal(data, &given); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range packs.SettingFlags(mode) {
		if f.Name == "allow-remote" {
			continue
		}
		v, ok := given[strings.ReplaceAll(f.Name, "-", "_")]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case string:
			out[f.Key] = x
		case float64:
			out[f.Key] = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			out[f.Key] = strconv.FormatBool(x)
		}
	}
	return out, nil
}

// toolJob is one call's job and what the call said beside it.
type toolJob struct {
	job engine.Job
	// model and role are the call's model and role arguments (a chat mode's).
	model, role string
	// args are the call's arguments, whose settings resolve on top of the operator's.
	args any
	// file is the file the job works on, one call at a time; "" for none.
	file string
	// argv is what the journal records as the run's arguments.
	argv []string
	// note is what the text says beside the summary that the structured content does not hold.
	note func(*engine.Result) string
	// hear, when set, is given the call's progress notifier, for a job that narrates its items.
	hear func(say func(string))
}

// run hands a call's job to the job layer, as the CLI does: the settings, the model choice and
// the rails before the run are the same for both. A refusal comes back as the tool's result: the
// text the host reads and, as structured content, the result object of a run that never began,
// whose error names the command that lifts it.
func (s *Server) run(ctx context.Context, req *sdk.CallToolRequest, t toolJob) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	mode := t.job.Mode()
	p := progress(ctx, req)
	call := job.Call{Tool: true, Model: t.model, RoleGiven: t.role != "", ArgName: argName, Argv: t.argv, Observer: p.observer()}
	if t.hear != nil {
		t.hear(p.say)
	}
	refuse := func(err error) (*sdk.CallToolResult, any, error) {
		res := s.jobs.NotStarted(mode, call, err)
		return fail("%s: %s", res.Status, res.Error.Message), res, nil
	}
	var err error
	if call.Args, err = s.callArgs(mode.Name, t.args); err != nil {
		return refuse(err)
	}
	prepared, err := s.jobs.Prepare(ctx, mode, call)
	if err != nil {
		return refuse(err)
	}
	if t.file != "" {
		unlock, err := s.locks.lock(ctx, lockKey(s.opts.Dir, t.file), func() { p.say("queued: another call is working on " + t.file) })
		if err != nil {
			return fail("ERROR: cancelled while waiting for another call on %s", t.file), nil, nil
		}
		defer unlock()
	}
	// What the host wrote is the call as the protocol carries it: the tool's name and arguments.
	callBytes := 0
	if data, err := json.Marshal(map[string]any{"name": req.Params.Name, "arguments": req.Params.Arguments}); err == nil {
		callBytes = len(data)
	}
	text := func(res *engine.Result) string {
		line := summaryLine(res)
		if t.note != nil {
			if n := t.note(res); n != "" {
				line += "\n" + n
			}
		}
		return line
	}
	prepared.SetHost(&engine.HostSide{CallBytes: int64(callBytes), ResultBytes: func(res *engine.Result) int64 {
		data, _ := json.Marshal(res)
		return int64(len(text(res)) + len(data))
	}})
	runCtx, stop := s.runContext(ctx)
	defer stop()
	out, err := prepared.Run(runCtx, t.job)
	if err != nil {
		return refuse(err)
	}
	return s.finish(out, text(out))
}

// argName names a setting as a tool call takes it: its argument. An operator-only setting (the
// endpoint rail's allow_remote, say) is no argument: only the operator widens it.
func argName(name string) string {
	if packs.OperatorOnly(name) {
		return "the operator's " + strings.ReplaceAll(name, "_", "-") + " option of locum mcp"
	}
	return "`" + name + "`"
}

// finish makes a run's result the tool's: the --json object as structured content, one summary
// line as text (what the object holds is not said twice), isError unless it is OK.
func (s *Server) finish(res *engine.Result, text string) (*sdk.CallToolResult, any, error) {
	fmt.Fprintln(s.opts.Log, res.Receipt())
	return &sdk.CallToolResult{
		IsError: res.Status != engine.StatusOK,
		Content: []sdk.Content{&sdk.TextContent{Text: text}},
	}, res, nil
}

// summaryLine is a run's result in one line: its status, the outcome or the first line of the
// error, and what it saved the host. The rest (the receipt's figures, a digest's claims, a
// screen's groups, a verify's output) is the structured content's.
func summaryLine(res *engine.Result) string {
	line := res.Outcome()
	if res.Error != nil {
		msg, rest, _ := strings.Cut(strings.TrimSpace(res.Error.Message), "\n")
		if rest != "" {
			msg += " (error.message has the rest)"
		}
		if line != "" {
			line += "; "
		}
		line += fmt.Sprintf("locum %s: %s", res.Mode, untrusted.Escape(msg))
	}
	if line == "" {
		line = res.Mode
	}
	line = string(res.Status) + ": " + line
	switch {
	case res.HostSaved != nil:
		line += "; " + res.HostSaved.Receipt()
	case res.Host != nil:
		line += "; " + res.Host.Receipt()
	}
	if res.RunID != "" {
		// The run id lets a host's own usage log be joined to the run's journal.
		line += " run=" + res.RunID
	}
	return line
}

func (s *Server) status(ctx context.Context, _ *sdk.CallToolRequest, args StatusArgs) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	callArgs, err := s.callArgs("", args)
	if err != nil {
		return fail("ERROR: %v", err), nil, nil
	}
	rep, err := s.jobs.Status(ctx, job.StatusRequest{Tool: true, Args: callArgs, Model: args.Model, EmbedModel: args.EmbedModel, ArgName: argName})
	var unread *job.WorkspaceError
	switch {
	case errors.As(err, &unread):
		return fail("ERROR: the workspace cannot be read: %v", unread.Err), nil, nil
	case err != nil:
		return fail("ERROR: %v", err), nil, nil
	}
	text := statusLine(rep)
	if rep.ModelRefusal != nil {
		text += "; REFUSED for a run: " + untrusted.EscapeLines(rep.ModelRefusal.Message)
	}
	return &sdk.CallToolResult{IsError: !rep.Up || rep.ModelRefusal != nil, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, rep, nil
}

// statusLine says what status found in one line. Names and messages come from the server:
// escaped, as on the terminal.
func statusLine(rep *engine.StatusReport) string {
	if !rep.Up {
		msg := ""
		if rep.Error != nil {
			msg = rep.Error.Message
		}
		if rep.Error != nil && rep.Error.Kind == "off_loopback" {
			return "REFUSED: " + untrusted.EscapeLines(msg)
		}
		line := fmt.Sprintf("no server answers at %s (%s): %s", rep.Endpoint, rep.Source, untrusted.EscapeLines(msg))
		if len(rep.Start) > 0 {
			line += "; start one: " + strings.Join(rep.Start, " or ")
		}
		return line
	}
	ids := make([]string, 0, len(rep.Models))
	for _, m := range rep.Models {
		ids = append(ids, untrusted.Escape(m.ID))
	}
	name := "a server"
	if rep.ServerName != nil {
		name = *rep.ServerName
	}
	line := fmt.Sprintf("%s answers at %s in %dms; models: %s", strings.TrimSpace(name+" "+untrusted.Escape(rep.Version)), rep.Endpoint, rep.LatencyMs, strings.Join(ids, ", "))
	type presence struct {
		label string
		m     *engine.ModelPresence
	}
	models := []presence{{"chat model", rep.ChatModel}}
	for i := range rep.RoleModels {
		models = append(models, presence{"role " + rep.RoleModels[i].Role, &rep.RoleModels[i].ModelPresence})
	}
	for _, p := range append(models, presence{"embed model", rep.EmbedModel}) {
		if p.m == nil {
			continue
		}
		state := "listed"
		if !p.m.Listed {
			state = "NOT listed"
		}
		line += fmt.Sprintf("; %s %s: %s", p.label, untrusted.Escape(p.m.ID), state)
	}
	if rep.EmbedNote != "" {
		line += "; " + rep.EmbedNote
	}
	return line
}

func (s *Server) transform(ctx context.Context, req *sdk.CallToolRequest, args TransformArgs) (*sdk.CallToolResult, any, error) {
	return s.run(ctx, req, toolJob{
		job:   transform.Job{File: args.File, Lines: args.Lines, Symbol: args.Symbol, Verify: args.Verify, Task: args.Task},
		model: args.Model, role: args.Role, args: args, file: args.File, argv: []string{args.Task},
	})
}

func (s *Server) summarize(ctx context.Context, req *sdk.CallToolRequest, args SummarizeArgs) (*sdk.CallToolResult, any, error) {
	j := &summarize.Job{File: args.File, Lines: args.Lines, Symbol: args.Symbol, Focus: args.Focus}
	var argv []string
	if args.Focus != "" {
		argv = []string{args.Focus}
	}
	return s.run(ctx, req, toolJob{
		job: j, model: args.Model, role: args.Role, args: args, file: args.File, argv: argv,
	})
}

func (s *Server) verifyCheck(ctx context.Context, req *sdk.CallToolRequest, args VerifyCheckArgs) (*sdk.CallToolResult, any, error) {
	j := &verifycheck.Job{File: args.File, Lines: args.Lines, Symbol: args.Symbol, Verify: args.Verify}
	return s.run(ctx, req, toolJob{job: j, args: args, file: args.File})
}

func (s *Server) dedup(ctx context.Context, req *sdk.CallToolRequest, args DedupArgs) (*sdk.CallToolResult, any, error) {
	j := &dedup.Job{Dir: args.Dir, NoCache: args.NoCache, Pairs: args.Pairs}
	return s.run(ctx, req, toolJob{job: j, args: args, note: func(out *engine.Result) string {
		if out.Error != nil {
			return ""
		}
		return dedupNotes(&j.Found)
	}})
}

// dedupNotes are what a screen's structured content does not say: why it compared words, which
// embedding model it picked, a warning, a cache it could not use.
func dedupNotes(found *dedup.Result) string {
	var notes []string
	if found.Why != "" {
		notes = append(notes, "comparing words, not embeddings: "+found.Why+"; name an embedding model (model) for a screen by meaning")
	}
	if found.Picked != "" {
		notes = append(notes, "embedding with "+untrusted.Escape(found.Picked)+", "+client.PickedEmbedSource+"; the model argument names another")
	}
	if w := found.Warning(); w != "" {
		notes = append(notes, w)
	}
	if found.CacheProblem != "" {
		notes = append(notes, "the embedding cache was not used: "+untrusted.Escape(found.CacheProblem))
	}
	return strings.Join(notes, "; ")
}

func (s *Server) runWorkflow(ctx context.Context, req *sdk.CallToolRequest, args RunArgs) (*sdk.CallToolResult, any, error) {
	if (args.Workflow == "") == (args.Resume == "") {
		return fail("ERROR: give workflow (with its params) or resume, one of them"), nil, nil
	}
	if args.Resume != "" && len(args.Params) > 0 {
		return fail("ERROR: resume runs the workflow and params of the run it resumes: give no params"), nil, nil
	}
	j := &workflow.Job{Layer: s.jobs, Call: job.Call{Tool: true, ArgName: argName, Model: args.Model}, Name: args.Workflow, Params: args.Params, Resume: args.Resume}
	argv := []string{args.Workflow}
	if args.Resume != "" {
		argv = []string{"--resume", args.Resume}
	}
	return s.run(ctx, req, toolJob{job: j, model: args.Model, args: args, argv: argv, hear: func(say func(string)) {
		j.Progress = func(p workflow.Progress) {
			if p.Item != nil {
				say(fmt.Sprintf("%s (%d of %d done, %d running, %d red)", workflow.ItemLine(*p.Item), p.Done, p.Total, p.Running, p.Red))
			}
		}
	}})
}

func (s *Server) runsShow(_ context.Context, _ *sdk.CallToolRequest, args RunsShowArgs) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	if strings.TrimSpace(args.RunID) == "" {
		return fail("ERROR: run_id is empty: give the run_id of a result"), nil, nil
	}
	j, err := s.jobs.RunJournal(args.RunID)
	if err != nil {
		return fail("ERROR: %v", err), nil, nil
	}
	lines := []string{"journal " + j.Path}
	if !j.Sealed {
		lines = append(lines, "unsealed: "+engine.Unsealed)
	}
	if j.Cut != "" {
		lines = append(lines, "cut: "+j.Cut)
	}
	for _, ev := range j.Events {
		lines = append(lines, engine.EventLine(ev))
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, &RunEvents{Journal: j.Path, Events: j.Events, Sealed: j.Sealed, Cut: j.Cut}, nil
}
