// Package engine runs a mode's named steps over the client: the run journal, the guards run once
// on every exit path, the progress a front end hears, the receipt and result, and Classify, the
// one mapping from an error to a status and an exit code. Among the runner packages it imports
// only the client; every mode imports it.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
)

// Step is one named step of a mode's workflow.
type Step struct {
	Name string
	Run  func(ctx context.Context, run *Run) error
}

// RunSpec is what a run needs before it starts.
type RunSpec struct {
	Mode     string
	Root     string
	Settings *packs.Settings
	// Model is the model the run will use, and Routing how it was chosen ("operator" for an
	// explicit --model, "earned" for a role's routing); both may be filled in by a step.
	Model   string
	Routing string
	// JournalPath overrides the journal file; "" puts it under RunsDir(Root).
	JournalPath string
	Args        []string
	Version     string
	// ArgName names a setting in an error's message as the front end takes it; nil is the
	// command line's flags. The MCP server names its tool arguments.
	ArgName func(setting string) string
	// Stderr receives warnings. Progress, when set, receives the lines a mode writes to narrate a
	// long run (the agent's one per tool call), for a person at a terminal; the live line of a
	// streamed reply goes to the Observer.
	Stderr   io.Writer
	Progress io.Writer
	// Observer, when set, hears each stage of the run as it happens (prefill, decode, verify).
	Observer Observer
	// Dial replaces the loopback dialer; Transport replaces the network (offline checks).
	Dial      rails.DialFunc
	Transport http.RoundTripper
	// Host, when set, is the front end's side of the host's cost: with it the result and the
	// journal carry the host-cost estimate.
	Host *HostSide
	// Parent, when set, is the workflow run this run is one item of; run_start records it.
	Parent *ParentRun
	// JournalKey loads the operator's key the journal is sealed with (JournalKey, made on first
	// use): only a sealed journal counts in the ledger and the break-even. Nil seals nothing.
	JournalKey func() ([]byte, error)
}

// ParentRun names the workflow run, step and item a run was started for.
type ParentRun struct {
	Run  string `json:"run"`
	Step string `json:"step"`
	Item string `json:"item"`
}

// Run is a run in progress. Steps read and extend it.
type Run struct {
	ID      string
	Spec    RunSpec
	Journal *Journal
	Client  *client.Client

	// calls counts the requests sent to the model (a chat, an embedding batch), whatever their
	// outcome: the receipt's attempts in every mode.
	calls     int
	in, out   int64
	inKnown   bool
	outKnown  bool
	ttft      time.Duration
	ttftKnown bool
	elapsed   time.Duration
	// decodeTokens and decodeTime sum the decodes that were timed (see Decode).
	decodeTokens int64
	decodeTime   time.Duration
	// details are the mode's details (SetDetails): a pointer to its struct, or nil.
	details any
	guards  []guard
	// baseline is the verify's verdict before the run changed anything (Baseline).
	baseline string
	// sandbox is how the run's verify was contained, the last time it ran.
	sandbox string
	// verifyStrength is how many mutants of the kept change the verify rejected (K/N, or ?).
	verifyStrength string
	step           string // the step of the request in flight, for progress
	// sandboxWhy says the journal has why no sandbox was in force (Verify).
	sandboxWhy bool
	// work is what the host would have spent on the job itself (HostWork).
	work HostWork
	// itemsSaved sums what a workflow's items saved the host (AddItemSaved).
	itemsMu    sync.Mutex
	itemsSaved *cost.Summary
	// handoff makes the run's handoff should it end red (SetHandoff).
	handoff HandoffFunc
}

type guard struct {
	name string
	fn   func() error
}

// Guard registers fn to run once when the run ends, on every exit path (a red verdict, an
// error, a signal, a panic in a step), in reverse order of registration.
func (r *Run) Guard(name string, fn func() error) {
	r.guards = append(r.guards, guard{name: name, fn: fn})
}

// SetVerifyStrength records how many mutants of the kept change the verify rejected, K/N, or ?
// where none could be measured, for the result and the receipt.
func (r *Run) SetVerifyStrength(s string) { r.verifyStrength = s }

// SetDetails makes d, a pointer to the mode's details struct, the run's details: the result's
// and run_end's, as the steps and guards have left it when the run ends. Where d has a method
// JournalDetails, run_end keeps what it returns in their place (a screen keeps its top pairs,
// not a million). Details whose every key is left out are none: null.
func (r *Run) SetDetails(d any) {
	if v := reflect.ValueOf(d); v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("engine: details are a pointer to a struct, not %T", d))
	}
	r.details = d
}

// Emit appends a mode's event to the journal.
func (r *Run) Emit(ev Event) { r.Journal.Emit(ev) }

// Connect checks the endpoint against the loopback rail and makes the client. It is the step
// every mode that talks to a model runs first, so a refused endpoint is refused before any
// request.
func (r *Run) Connect() error {
	s := r.Spec.Settings
	u, err := rails.ParseEndpoint(s.String(packs.BaseURL), s.Bool(packs.AllowRemote))
	if err != nil {
		return err
	}
	r.Client = client.New(client.Config{
		BaseURL:           u,
		AllowRemote:       s.Bool(packs.AllowRemote),
		Timeout:           s.Duration(packs.Timeout),
		FirstTokenTimeout: s.Duration(packs.FirstTokenTimeout),
		Dial:              r.Spec.Dial,
		Transport:         r.Spec.Transport,
		Observe:           r.streamObserver(),
		ObservePrompt:     r.promptObserver(),
	})
	return nil
}

// streamObserver forwards a streamed reply's growth to the run's observer.
func (r *Run) streamObserver() client.StreamObserver {
	if r.Spec.Observer == nil {
		return nil
	}
	return func(chars, deltas int, elapsed time.Duration) {
		r.Observe(ProgressEvent{Stage: StageDecode, Step: r.step, Chars: chars, Deltas: deltas, Elapsed: elapsed})
	}
}

// promptObserver forwards the server's own count of the prompt tokens it has read.
func (r *Run) promptObserver() client.PromptObserver {
	if r.Spec.Observer == nil {
		return nil
	}
	return func(processed, total int, elapsed time.Duration) {
		r.Observe(ProgressEvent{Stage: StagePrefill, Step: r.step, Done: processed, Total: total, Elapsed: elapsed})
	}
}

// Chat sends one chat request through the run's client, journalling the request and the reply
// and adding the reply's figures to the run's.
func (r *Run) Chat(ctx context.Context, step string, req client.ChatRequest) (*client.ChatResult, error) {
	size := 0
	for _, m := range req.Messages {
		size += len(m.Content)
	}
	asked := req.MaxTokens
	journaled := false
	journalRequest := func(sent int64) {
		journaled = true
		ev := RequestEvent{Step: step, Model: req.Model, PromptBytes: size, PromptSHA256: promptHash(req.Messages),
			MaxTokens: sent, Effort: req.Effort, Stream: req.Stream, Temperature: req.Temperature, Seed: req.Seed}
		if sent != asked {
			ev.MaxTokensAsked = new(asked)
		}
		r.Journal.Emit(ev)
	}
	req.BeforeSend = journalRequest
	// A probe that fails, or a prompt refused for the context, sends no chat request: it is not
	// an attempt.
	if _, err := r.Client.Probe(ctx); err != nil {
		journalRequest(asked)
		r.Journal.Emit(ReplyFailedEvent{Step: step, Error: errString(err), Sent: new(false)})
		return nil, err
	}
	r.step = step
	r.Observe(ProgressEvent{Stage: StagePrefill, Step: step})
	// The pack's default reply room gives way to a small context; one the user chose is kept,
	// and refused when it does not fit.
	if s := r.Spec.Settings; s != nil && !s.OverridesBuiltin(packs.MaxOutputTokens) && req.MaxTokens <= s.Int(packs.MaxOutputTokens) {
		req.FitMaxTokens = true
	}
	res, err := r.Client.Chat(ctx, req)
	if !journaled {
		journalRequest(asked)
	}
	var refused *client.ContextError
	var noTools *client.ToolsUnsupportedError
	if errors.As(err, &refused) || errors.As(err, &noTools) {
		r.Journal.Emit(ReplyFailedEvent{Step: step, Error: errString(err), Sent: new(false)})
		return nil, err
	}
	r.calls++
	if res == nil {
		r.Journal.Emit(ReplyFailedEvent{Step: step, Error: errString(err)})
		return nil, err
	}
	r.add(res)
	if res.CapabilitiesError != "" {
		r.Journal.Emit(CapabilitiesEvent{Step: step, Model: req.Model, Capabilities: "unknown", Error: res.CapabilitiesError})
	}
	r.Journal.Emit(ReplyEvent{
		Step: step, Class: string(res.Class), FinishReason: res.FinishReason,
		InTokens: res.Usage.In, OutTokens: res.Usage.Out,
		AnswerBytes: len(res.Answer), ThinkingBytes: len(res.Thinking), ResponseBytes: res.Bytes,
		TTFTms: msOrNil(res.TTFT, res.Streamed), ElapsedMs: res.Elapsed.Milliseconds(),
		ThinkingSwitch: res.Sent, PromptFit: res.Fit, Answer: capText(res.Answer, 16<<10), Error: errString(err),
	})
	return res, err
}

func (r *Run) add(res *client.ChatResult) {
	first := r.calls == 1
	if res.Usage.In != nil && (first || r.inKnown) {
		r.in = saturatingAdd(r.in, *res.Usage.In)
		r.inKnown = true
	} else {
		r.inKnown = false
	}
	if res.Usage.Out != nil && (first || r.outKnown) {
		r.out = saturatingAdd(r.out, *res.Usage.Out)
		r.outKnown = true
	} else {
		r.outKnown = false
	}
	// The time to first token is the first attempt's: a retry's prefill reuses the server's
	// cache and says nothing about the first wait. The journal has each attempt's.
	if first && res.Streamed && res.TTFT > 0 {
		r.ttft, r.ttftKnown = res.TTFT, true
	}
	if d := res.Decode; d != nil {
		r.decodeTokens = saturatingAdd(r.decodeTokens, d.Tokens)
		r.decodeTime += d.Time
	}
	r.elapsed += res.Elapsed
}

// saturatingAdd adds two non-negative counts, stopping at the largest int64 rather than
// wrapping to a negative figure.
func saturatingAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// AddUsage adds the figures of a request the run made outside Chat (an embedding batch); a
// request that failed is counted too, with no usage.
func (r *Run) AddUsage(u client.Usage, elapsed time.Duration) { r.AddRequests(1, u, elapsed) }

// AddRequests adds n requests made by a run inside this one (a workflow's item), with their
// figures summed.
func (r *Run) AddRequests(n int, u client.Usage, elapsed time.Duration) {
	// add reads the first request's figures as the run's first: the count moves past the
	// first of the n before it, and past the rest after.
	r.calls++
	r.add(&client.ChatResult{Usage: u, Elapsed: elapsed})
	r.calls += n - 1
}

// Execute runs the steps in order under ctx and returns the run's one result. The journal gets
// run_start (with every resolved setting and its source), each step's events, and run_end.
func Execute(ctx context.Context, spec RunSpec, steps []Step) *Result {
	start := time.Now()
	run := &Run{ID: NewRunID(start), Spec: spec}
	run.Journal = run.openJournal()
	defer run.Journal.Close()

	settings := []packs.Setting{}
	if spec.Settings != nil {
		settings = spec.Settings.All()
	}
	run.Journal.Emit(RunStartEvent{JournalVersion: JournalVersion, Mode: spec.Mode, Model: spec.Model, Routing: spec.Routing,
		Settings: settings, Args: spec.Args, Version: spec.Version, Root: spec.Root, Parent: spec.Parent})

	err := run.steps(ctx, steps)
	// Made before the guards, which may take away what it shows (an agent's worktree).
	handoff := run.makeHandoff(ctx, err)
	if gerr := run.runGuards(); gerr != nil {
		err = errors.Join(err, gerr)
	}
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			var sig *client.SignalError
			if errors.As(cause, &sig) && !errors.As(err, new(*client.SignalError)) {
				err = errors.Join(sig, err)
			}
		}
	}
	res := run.result(err)
	if res.Status == StatusRed && handoff != nil {
		res.Handoff = handoff
		run.Journal.Emit(HandoffEvent{Handoff: handoff, Files: handoff.Files()})
	}
	run.hostCost(res)
	journaled := res.Details
	if s, ok := journaled.(journalShortened); ok {
		journaled = s.JournalDetails()
	}
	details, err := encodeDetails(journaled)
	if err != nil && spec.Stderr != nil {
		fmt.Fprintf(spec.Stderr, "locum: warning: the run's details could not be journaled: %v\n", err)
	}
	run.Journal.Emit(RunEndEvent{Status: res.Status, ExitCode: res.ExitCode, Error: res.Error,
		Model: res.Model, Receipt: res.Receipt(), Details: details, Host: res.Host, WallMs: time.Since(start).Milliseconds()})
	if jerr := run.Journal.Err(); jerr != nil && spec.Stderr != nil {
		fmt.Fprintf(spec.Stderr, "locum: warning: the run journal %s could not be written: %v\n", run.Journal.Path(), jerr)
	}
	return res
}

func (r *Run) openJournal() *Journal {
	path := r.Spec.JournalPath
	if path == "" {
		dir, err := RunsDir(r.Spec.Root)
		if err != nil {
			return &Journal{runID: r.ID, failed: err, now: time.Now}
		}
		path = filepath.Join(dir, r.ID+".jsonl")
	}
	j, _ := OpenJournal(path, r.ID)
	if r.Spec.JournalKey != nil && j.Err() == nil {
		key, err := r.Spec.JournalKey()
		if err != nil && r.Spec.Stderr != nil {
			fmt.Fprintf(r.Spec.Stderr, "locum: warning: the run journal is not sealed (%v): the ledger and the break-even will not count this run\n", err)
		}
		j.Seal(key)
	}
	return j
}

func (r *Run) steps(ctx context.Context, steps []Step) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in a step: %v", p)
		}
	}()
	for _, s := range steps {
		if cerr := ctx.Err(); cerr != nil {
			return context.Cause(ctx)
		}
		r.Journal.Emit(StepEvent{Step: s.Name})
		if err := s.Run(ctx, r); err != nil {
			r.Journal.Emit(StepFailedEvent{Step: s.Name, Error: err.Error()})
			return err
		}
	}
	return nil
}

// runGuards runs every guard once, last registered first, and reports the ones that failed.
func (r *Run) runGuards() error {
	var errs []error
	for i := len(r.guards) - 1; i >= 0; i-- {
		g := r.guards[i]
		if err := runGuard(g); err != nil {
			r.Journal.Emit(GuardFailedEvent{Guard: g.name, Error: err.Error()})
			errs = append(errs, fmt.Errorf("%s: %w", g.name, err))
		} else {
			r.Journal.Emit(GuardEvent{Guard: g.name})
		}
	}
	r.guards = nil
	return errors.Join(errs...)
}

func runGuard(g guard) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return g.fn()
}

func (r *Run) result(err error) *Result {
	status, kind, code := Classify(err)
	res := &Result{Status: status, Mode: r.Spec.Mode, RunID: r.ID, Attempts: r.calls, TimeMs: r.elapsed.Milliseconds(),
		Spend: "$0.00", ExitCode: code}
	if hasDetails(r.details) {
		res.Details = r.details
	}
	if r.Spec.Model != "" {
		res.Model = &r.Spec.Model
	}
	if r.Spec.Routing != "" {
		res.Routing = &r.Spec.Routing
	}
	if r.calls > 0 {
		if r.inKnown && plausibleTokens(r.in) {
			res.In = &r.in
		}
		if r.outKnown && plausibleTokens(r.out) {
			res.Out = &r.out
		}
		if r.ttftKnown {
			ms := r.ttft.Milliseconds()
			res.TTFTms = &ms
		}
		if r.decodeTime > 0 && plausibleTokens(r.decodeTokens) {
			rate := float64(r.decodeTokens) / r.decodeTime.Seconds()
			if rate <= maxPlausibleRate {
				res.Rate = &rate
			}
		}
	}
	if r.baseline != "" {
		res.Baseline = &r.baseline
	}
	if r.sandbox != "" {
		res.Sandbox = &r.sandbox
	}
	if r.verifyStrength != "" {
		res.VerifyStrength = &r.verifyStrength
	}
	if p := r.Journal.Path(); p != "" && r.Journal.Err() == nil {
		res.Journal = &p
	}
	if err != nil {
		res.Error = errorInfo(kind, err)
		res.Error.Message = Reword(res.Error.Message, err, r.Spec.ArgName)
	}
	return res
}

// maxTokens and maxPlausibleRate bound the figures a receipt prints: beyond them a server's
// figure is nonsense (an overflowed counter), printed as ? rather than as a number.
const (
	maxTokens        = 1 << 40
	maxPlausibleRate = 1e6
)

func plausibleTokens(n int64) bool { return n >= 0 && n < maxTokens }

// promptHash lets two runs' prompts be compared without the journal holding them.
func promptHash(msgs []client.Message) string {
	h := sha256.New()
	for _, m := range msgs {
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", m.Role, len(m.Content), m.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func msOrNil(d time.Duration, known bool) *int64 {
	if !known || d <= 0 {
		return nil
	}
	return new(d.Milliseconds())
}

func errString(err error) *string {
	if err == nil {
		return nil
	}
	return new(err.Error())
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "...[cut]"
}

// Reword puts an error's own part of msg in the front end's words, where the error names
// settings (rails.Worded) and the front end names them its own way.
func Reword(msg string, err error, name func(string) string) string {
	var w rails.Worded
	if name == nil || !errors.As(err, &w) {
		return msg
	}
	return strings.Replace(msg, w.Error(), w.Words(name), 1)
}
