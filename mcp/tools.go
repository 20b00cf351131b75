package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/analyze"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/ledger"
	"github.com/locumdev/locum/runner/review"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/untrusted"
	"github.com/locumdev/locum/workflow"
)

// A tool that runs a mode takes the mode's own arguments (what to work on), declared with the
// mode (engine.Tool), and the settings a call may set (schema.go), which go through the same
// cascade as the CLI's flags (default, packs, workspace, LOCUM_* environment, then the call).
// allow_remote is never an argument: only the operator widens the loopback rail.

// RunsShowArgs are the arguments of the runs_show tool.
type RunsShowArgs struct {
	RunID string `json:"run_id" jsonschema:"a result's run_id, or a unique prefix"`
}

// SymbolsArgs are the arguments of the symbols tool.
type SymbolsArgs struct {
	Files []string `json:"files"`
}

// LedgerArgs are the arguments of the ledger tool.
type LedgerArgs struct {
	By    string `json:"by,omitempty" jsonschema:"model, mode (default), role or week"`
	Since string `json:"since,omitempty" jsonschema:"7d, 36h or 2026-11-01"`
	Mode  string `json:"mode,omitempty"`
}

// RunEvents is one run's journal, and the diff of the branch it left.
type RunEvents struct {
	Journal string           `json:"journal"`
	Events  []map[string]any `json:"events"`
	// Sealed says locum can show it wrote the journal; Cut why not every event is here.
	Sealed bool        `json:"sealed"`
	Cut    string      `json:"cut,omitempty"`
	Diff   *BranchDiff `json:"diff,omitempty"`
}

// BranchDiff is the diff of a run's branch from where it started, as git prints it.
type BranchDiff struct {
	Branch string `json:"branch"`
	// Text is the diff, cut at diffBytes where Bytes, its whole size, is more.
	Text  string `json:"text"`
	Bytes int64  `json:"bytes"`
}

// diffBytes bounds the diff runs_show puts in a host's context: a mechanical change across a few
// files fits; a larger one the person reads with runs show --diff.
const diffBytes = 32 << 10

// addTools declares the tools. A host keeps every byte of the list in its context on every turn
// of every session, so each description says when to call the tool and what comes back, and no
// more: a refusal's or a verdict's own text says why and what to do. No tool declares an output
// schema: the structured content of a mode's tool and of run is locum's --json result, which
// spec/result.schema.json publishes, symbols' is spec/symbols.schema.json, and the other three's
// are the objects of the commands' --json; the tests hold each to its contract. A mode's tool is listed for every registered mode
// that declares one (engine.Mode.Tool), in whatever binary links it. Each handler returns its object as any: a call
// refused before it ran has none, where a typed one would make the SDK send a zero object.
func (s *Server) addTools() error {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	// A call that writes only a branch of its own changes none of the person's files.
	branch := &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	statusSettings := callSettings(engine.Mode{})
	addTool(s, &sdk.Tool{
		Name: "status",
		Description: "Is a local model server up, and which models does it list? Call it before the other tools; " +
			"it sends no prompt. isError when none answers (the text says what starts one) or the endpoint is off this machine.",
		Annotations: readOnly,
		InputSchema: inputSchema([]engine.ToolArg{{Name: "model", Doc: "a chat model"}, {Name: "embed_model", Doc: "an embedding model"}}, statusSettings),
	}, func(ctx context.Context, req *sdk.CallToolRequest, args engine.ToolArgs) (*sdk.CallToolResult, any, error) {
		return s.status(ctx, args, callArgs(statusSettings, args))
	})
	for _, name := range engine.RegisteredModes() {
		if m, _ := engine.LookupMode(name); m.Tool != nil {
			s.addModeTool(m, readOnly, branch)
		}
	}
	runSettings := callSettings(workflow.Mode)
	runSchema := inputSchema([]engine.ToolArg{
		engine.ToolArg{Name: "workflow", Doc: "go-doc, go-tidy, tidy, notes-digest or the workspace's"},
		engine.ToolArg{Name: "resume", Doc: "instead of workflow: an interrupted run's run_id"},
		modelArg,
	}, runSettings)
	runSchema.Properties["params"] = &jsonschema.Schema{Type: "object", Description: `such as {"dir": "pkg/calc"}`, AdditionalProperties: &jsonschema.Schema{Type: "string"}}
	runSchema.PropertyOrder = slices.Insert(runSchema.PropertyOrder, 1, "params")
	addTool(s, &sdk.Tool{
		Name: "run",
		Description: "Run a pack's workflow: one edit or digest over many declarations or files in one call (not many " +
			"transform calls). Each item is verified in its own worktree; green edits are combined on " +
			"details.branch and verified again, never in your tree: read it with runs_show, then ask the person to run " +
			"locum runs accept RUN_ID. RED when an item or the final verify was not green.",
		Annotations: branch,
		InputSchema: runSchema,
	}, func(ctx context.Context, req *sdk.CallToolRequest, args engine.ToolArgs) (*sdk.CallToolResult, any, error) {
		return s.runWorkflow(ctx, req, args, callArgs(runSettings, args))
	})
	addTool(s, &sdk.Tool{
		Name:        "symbols",
		Description: "Declarations in Go, Python, TS, JS or Rust files, with their lines: what symbol takes.",
		Annotations: readOnly,
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"files"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{"files": {Type: "array", Items: &jsonschema.Schema{Type: "string"}}}},
	}, s.symbols)
	addTool(s, &sdk.Tool{
		Name:        "runs_show",
		Description: "Read a run's journal: its settings, each request and reply, each verify's verdict and output. To see why a run went red.",
		Annotations: readOnly,
	}, s.runsShow)
	addTool(s, &sdk.Tool{
		Name: "ledger",
		Description: "What delegation saved or cost you in this repository (estimated): runs, keep rate, tokens net of " +
			"losses, and each mode and role's break-even, as locum ledger --json.",
		Annotations: readOnly,
	}, s.ledger)
	return nil
}

// addTool serves a tool and records its name, for Tools.
func addTool[In any](s *Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, any]) {
	sdk.AddTool(s.sdk, t, h)
	s.tools = append(s.tools, t.Name)
}

// Tools are the names of the tools the server lists, in the order it added them: what a host's
// worker may be allowed to call.
func (s *Server) Tools() []string { return slices.Clone(s.tools) }

// addModeTool serves a mode that declares a tool: its arguments and the settings a call may set,
// each call's job built by the mode and run through the job layer.
func (s *Server) addModeTool(m engine.Mode, readOnly, branch *sdk.ToolAnnotations) {
	own := m.Tool.Args
	if m.Model == engine.ChatModel {
		own = append(slices.Clone(own), modelArg)
	}
	settings := callSettings(m)
	annotations := readOnly
	switch {
	case m.Tool.Edits:
		// A kept edit replaces lines of a file: destructive, for a host that asks before such calls.
		annotations = &sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	case m.Tool.Branches:
		annotations = branch
	}
	addTool(s, &sdk.Tool{Name: m.ToolName(), Description: m.Tool.Description, Annotations: annotations, InputSchema: inputSchema(own, settings)},
		func(ctx context.Context, req *sdk.CallToolRequest, args engine.ToolArgs) (*sdk.CallToolResult, any, error) {
			t := toolJob{mode: m, role: args.String(packs.RoleSetting.String()), args: callArgs(settings, args)}
			if m.Model == engine.ChatModel {
				t.model = args.String(modelArg.Name)
			}
			built, err := m.Tool.Job(args)
			if err != nil {
				defer s.begin()()
				return s.refuse(t, err)
			}
			t.job, t.file, t.argv, t.note = built.Job, built.File, built.Argv, built.Note
			return s.run(ctx, req, t)
		})
}

// symbols lists files' declarations as locum symbols --json does, each file read as a
// transform's prompt holding it would be: inside the repository, under the input budget.
func (s *Server) symbols(_ context.Context, _ *sdk.CallToolRequest, args SymbolsArgs) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	if len(args.Files) == 0 {
		return fail("ERROR: files is empty: name the files, from the repository root"), nil, nil
	}
	budget, err := s.jobs.SymbolsBudget(nil)
	if err != nil {
		return fail("ERROR: %v", err), nil, nil
	}
	rep := scope.ReadSymbols(s.opts.Dir, s.jobs.Root(), args.Files, budget, argName)
	lines := make([]string, 0, len(rep.Files))
	for _, f := range rep.Files {
		if f.Error != nil {
			lines = append(lines, f.Error.Message)
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %d declarations (structuredContent)", untrusted.Escape(f.File), len(f.Symbols)))
	}
	return &sdk.CallToolResult{IsError: rep.Failed() || rep.Refused(), Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, rep, nil
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

// toolJob is one call's job and what the call said beside it.
type toolJob struct {
	mode engine.Mode
	job  engine.Job
	// model and role are the call's model and role arguments (a chat mode's).
	model, role string
	// args are the settings the call's arguments set, resolved on top of the operator's.
	args map[string]string
	// file is the file the job works on, one call at a time; "" for none.
	file string
	// argv is what the journal records as the run's arguments.
	argv []string
	// note is what the text says beside the summary that the structured content does not hold.
	note func(*engine.Result) string
	// hear, when set, is given the call's progress notifier, for a job that narrates its items.
	hear func(say func(string))
}

// call is what the job layer is told of a tool call beside its job.
func (t toolJob) call() job.Call {
	return job.Call{Tool: true, Model: t.model, RoleGiven: t.role != "", Args: t.args, ArgName: argName, Argv: t.argv}
}

// refuse is the result of a call refused before its run began: the text the host reads and, as
// structured content, the result object of a run that never began, whose error names the command
// that lifts it.
func (s *Server) refuse(t toolJob, err error) (*sdk.CallToolResult, any, error) {
	res := s.jobs.NotStarted(t.mode, t.call(), err)
	return fail("%s: %s", res.Status, res.Error.Message), res, nil
}

// run hands a call's job to the job layer, as the CLI does: the settings, the model choice and
// the rails before the run are the same for both.
func (s *Server) run(ctx context.Context, req *sdk.CallToolRequest, t toolJob) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	p := progress(ctx, req)
	call := t.call()
	call.Observer = p.observer()
	if t.hear != nil {
		t.hear(p.say)
	}
	prepared, err := s.jobs.Prepare(ctx, t.mode, call)
	if err != nil {
		return s.refuse(t, err)
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
		return s.refuse(t, err)
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
	fmt.Fprintln(s.opts.Log, res.ShortReceipt())
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

func (s *Server) status(ctx context.Context, args engine.ToolArgs, settings map[string]string) (*sdk.CallToolResult, any, error) {
	defer s.begin()()
	rep, err := s.jobs.Status(ctx, job.StatusRequest{Tool: true, Args: settings, Model: args.String("model"), EmbedModel: args.String("embed_model"), ArgName: argName})
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

func (s *Server) runWorkflow(ctx context.Context, req *sdk.CallToolRequest, args engine.ToolArgs, settings map[string]string) (*sdk.CallToolResult, any, error) {
	name, resume, model := args.String("workflow"), args.String("resume"), args.String(modelArg.Name)
	params := map[string]string{}
	if given, ok := args["params"].(map[string]any); ok {
		for k, v := range given {
			params[k], _ = v.(string)
		}
	}
	if (name == "") == (resume == "") {
		return fail("ERROR: give workflow (with its params) or resume, one of them"), nil, nil
	}
	if resume != "" && len(params) > 0 {
		return fail("ERROR: resume runs the workflow and params of the run it resumes: give no params"), nil, nil
	}
	j := &workflow.Job{Layer: s.jobs, Call: job.Call{Tool: true, ArgName: argName, Model: model}, Name: name, Params: params, Resume: resume}
	argv := []string{name}
	if resume != "" {
		argv = []string{"--resume", resume}
	}
	return s.run(ctx, req, toolJob{mode: workflow.Mode, job: j, model: model, args: settings, argv: argv, hear: func(say func(string)) {
		j.Progress = func(p workflow.Progress) {
			if p.Item != nil {
				say(fmt.Sprintf("%s (%d of %d done, %d running, %d red)", workflow.ItemLine(*p.Item), p.Done, p.Total, p.Running, p.Red))
			}
		}
	}})
}

func (s *Server) runsShow(ctx context.Context, _ *sdk.CallToolRequest, args RunsShowArgs) (*sdk.CallToolResult, any, error) {
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
	out := &RunEvents{Journal: j.Path, Events: j.Events, Sealed: j.Sealed, Cut: j.Cut}
	diff, words := s.branchDiff(ctx, j)
	if words != "" {
		lines = append(lines, words)
	}
	if diff != nil {
		out.Diff = diff
		lines = append(lines, untrusted.EscapeLines(strings.TrimSuffix(diff.Text, "\n")))
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, out, nil
}

// branchDiff is the diff of the branch the run of journal j left, as runs show --diff reads it,
// and a line that says what it is; nil and "" for a run of a mode that leaves none, nil and why
// for a run whose branch is not there to read.
func (s *Server) branchDiff(ctx context.Context, j engine.RunJournal) (*BranchDiff, string) {
	rv, err := review.Of(ctx, s.root, j.Path, j.Events)
	var na *review.NotReviewableError
	switch {
	case errors.As(err, &na) && na.NotARun:
		return nil, ""
	case err != nil:
		return nil, "no diff: " + untrusted.EscapeLines(err.Error())
	}
	d, err := rv.Diff(ctx, diffBytes)
	if err != nil {
		return nil, "no diff: " + untrusted.EscapeLines(err.Error())
	}
	words := fmt.Sprintf("diff of branch %s from where it started, %d bytes:", rv.Branch, d.Size)
	if d.Cut() {
		words = fmt.Sprintf("diff of branch %s from where it started, its first %d of %d bytes (the person reads the rest with locum runs show %s --diff):",
			rv.Branch, len(d.Text), d.Size, rv.RunID)
	}
	return &BranchDiff{Branch: rv.Branch, Text: d.Text, Bytes: d.Size}, words
}
