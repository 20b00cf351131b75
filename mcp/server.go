// Package mcp serves locum's modes as Model Context Protocol tools, so a host (Claude Code,
// Codex, Cursor, Zed, Goose) calls them natively instead of typing a shell command. Each tool is a
// thin adapter over the same calls the CLI makes: the settings cascade, the model choice, the
// engine and its journal and receipt, so every rail holds the same way.
//
// It imports the job layer, the engine and the workflow, and no mode: it serves each registered
// mode that declares a tool. Nothing below cmd/locum imports it.
package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// Options is what the operator decided when starting the server. Nothing a tool call says can
// widen it.
type Options struct {
	// Dir is the working directory: relative paths of a call resolve from it, and the repository
	// root is found from it.
	Dir string
	// Env reads the LOCUM_* environment.
	Env packs.Lookup
	// Flags are the operator's setting flags (keyed without dashes, as packs.Composition.Resolve
	// takes them). A call's arguments go on top, except allow-remote, which only the operator sets.
	Flags map[string]string
	// AllowModel lets a call name a model (routing=operator). Without it a chat tool runs only the
	// model its role is routed to, earned or accepted by the operator.
	AllowModel bool
	Version    string
	// Log receives warnings and one receipt line per call; nil discards them.
	Log io.Writer
}

// Server is locum's MCP server.
type Server struct {
	opts  Options
	jobs  *job.Layer
	root  string
	sdk   *sdk.Server
	locks fileLocks
	calls sync.WaitGroup
	// inFlight is how many calls calls waits for, which a WaitGroup does not tell: a stop that
	// could not wait for them all says it.
	inFlight atomic.Int64
	// stopWait bounds how long Run waits for the calls it stopped (see defaultStopWait).
	stopWait time.Duration
	// life is the context Run serves under: when it ends (a signal), every call's context ends
	// with it, and its cause, not the host's cancellation, is what stopped the runs in flight.
	life context.Context
	// tools are the names of the tools served, as they were added.
	tools []string
}

// New builds the server and its tools. The repository root is found from opts.Dir now, once.
func New(opts Options) (*Server, error) {
	if opts.Env == nil {
		opts.Env = func(string) (string, bool) { return "", false }
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	v, err := schema.New()
	if err != nil {
		return nil, err
	}
	jobs, err := job.New(job.Operator{Dir: opts.Dir, Env: opts.Env, Flags: opts.Flags, CallModels: opts.AllowModel,
		Version: opts.Version, Stderr: opts.Log}, v)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, jobs: jobs, root: jobs.Root(), life: context.Background(), stopWait: defaultStopWait}
	rules, _ := jobs.BreakEven()
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "locum", Title: "locum", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions + breakEvenWords(rules),
		// Tools only: no logging capability, so a host gets nothing it has to route.
		Capabilities: &sdk.ServerCapabilities{},
	})
	s.sdk.AddReceivingMiddleware(s.withLife)
	if err := s.addTools(); err != nil {
		return nil, err
	}
	return s, nil
}

// instructions are what a host keeps of the server in its context on every turn, with the tool
// list: what locum guarantees and the one rule for reading its results. The rest is the tools'.
const instructions = "locum hands bounded jobs to a model on this machine, under rails in code: loopback only, " +
	"a prompt byte budget, and an edit kept only if its verify command exits 0 (else the file is restored). " +
	"Call status first. isError is a verdict or a refusal, not a fault: the text says why and what to do."

// breakEvenWords is the break-even a host obeys before it calls, for the instructions.
func breakEvenWords(rules []cost.Rule) string {
	if len(rules) == 0 {
		return ""
	}
	words := make([]string, len(rules))
	for i, r := range rules {
		words[i] = untrusted.Escape(r.Words())
	}
	return " Each of your turns re-reads your context: a call saves the turns the job takes you (read, edit, verify), " +
		"and costs one; pass host_context_tokens. Break-even: " + strings.Join(words, "; ") +
		". Below it, or for a stopped role, do it yourself; prefer one call, or one run, to many."
}

// SDK is the underlying MCP server, for a transport of the caller's choice.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Root is the repository root the server works in.
func (s *Server) Root() string { return s.root }

// defaultStopWait bounds how long Run waits, once its context has ended, for the calls it
// stopped: a verify is stopped within seconds and a file restored at once, so only a call stuck
// in the system reaches it. What such a call leaves, its rollback record restores at the next
// locum command.
const defaultStopWait = 10 * time.Second

// Run serves one session over t until the client goes away or ctx ends, then waits for the calls
// in flight: a transform cancelled by the session's end still restores its file before Run
// returns. When ctx ends (a signal), every call in flight is stopped at once, whether or not the
// host still holds the session open, and Run returns ctx's cause once they are done, or after
// defaultStopWait if one is not.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	s.life = ctx
	done := make(chan error, 1)
	go func() {
		err := s.sdk.Run(ctx, t)
		s.calls.Wait()
		done <- err
	}()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	case <-ctx.Done():
	}
	select {
	case <-done:
		return context.Cause(ctx)
	case <-time.After(s.stopWait):
		return fmt.Errorf("%w; calls still running %s later, left as they were: %d (the next locum command restores a file a call left edited)",
			context.Cause(ctx), s.stopWait, s.inFlight.Load())
	}
}

// withLife ends each request's context when the server's ends, with its cause. The SDK gives a
// handler a context that the end of its session does not cancel, and when its Run's context
// ends it waits for the handlers before it closes the session: without this a signal waited
// for every call to finish on its own, however long its verify or its model request took.
func (s *Server) withLife(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		life := s.life
		ctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
		defer func() {
			stop()
			cancel(nil)
		}()
		return next(ctx, method, req)
	}
}

// begin counts a call in flight, so Run waits for it.
func (s *Server) begin() func() {
	s.calls.Add(1)
	s.inFlight.Add(1)
	return func() {
		s.inFlight.Add(-1)
		s.calls.Done()
	}
}

// cancelled is the host's notifications/cancelled, given to the engine as the signal that
// stopped the run, so a cancelled call reads like an interrupted command: "stopped by
// notifications/cancelled", its file restored.
type cancelled struct{}

func (cancelled) String() string { return "notifications/cancelled" }
func (cancelled) Signal()        {}

var _ os.Signal = cancelled{}

// runContext detaches a call's run from the SDK's context so the cancellation reaches the engine
// with its cause; the run still stops at once when the call is cancelled, or the server stopped.
func (s *Server) runContext(ctx context.Context) (context.Context, func()) {
	run, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if cause := context.Cause(s.life); cause != nil {
			cancel(cause)
			return
		}
		cancel(&client.SignalError{Signal: cancelled{}})
	})
	return run, func() {
		stop()
		cancel(nil)
	}
}

// progress turns a run's stages into progress notifications for a call that asked for them with
// a progress token; nil when it did not.
func progress(ctx context.Context, req *sdk.CallToolRequest) *notifier {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	session := req.Session
	return &notifier{now: time.Now, send: func(n float64, msg string) {
		// A client that went away cannot be told; the run goes on to its guards either way.
		_ = session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
	}}
}

// progressEvery is the least time between two notifications of the same stage: a reply streams a
// token at a time, and a notification per token floods the host with hundreds of messages that
// each say nothing new. A new stage is told at once.
const progressEvery = time.Second

type notifier struct {
	now  func() time.Time
	send func(n float64, msg string)

	mu   sync.Mutex
	n    float64
	last struct {
		stage   engine.Stage
		attempt int
		at      time.Time
	}
}

func (p *notifier) say(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.send(p.n, msg)
}

// Observe reports one stage of the run, a stage already told at most once every progressEvery;
// the same stage of another attempt (an agent's next turn) is a new one.
func (p *notifier) Observe(ev engine.ProgressEvent) {
	msg := stageText(ev)
	if msg == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if ev.Stage == p.last.stage && ev.Attempt == p.last.attempt && !p.last.at.IsZero() && now.Sub(p.last.at) < progressEvery {
		return
	}
	p.last.stage, p.last.attempt, p.last.at = ev.Stage, ev.Attempt, now
	p.n++
	p.send(p.n, msg)
}

// stageText words a stage for the host; "" for one it is not told.
func stageText(ev engine.ProgressEvent) string {
	switch ev.Stage {
	case engine.StagePrefill:
		return fmt.Sprintf("prefill: the server reads the prompt (%s)", attempt(ev))
	case engine.StageDecode:
		return fmt.Sprintf("decode: %d tokens so far, %d chars in %s (%s)", ev.Deltas, ev.Chars, ev.Elapsed.Round(100*time.Millisecond), attempt(ev))
	case engine.StageVerify:
		if ev.Step == engine.StepBaseline {
			return "verify running (baseline, before any edit)"
		}
		return fmt.Sprintf("verify running (%s)", attempt(ev))
	case engine.StageMutants:
		return ev.MutantText()
	case engine.StageEmbed:
		return fmt.Sprintf("embedding: %d of %d entries sent", ev.Done, ev.Total)
	case engine.StageScore:
		return fmt.Sprintf("scoring the pairs of %d entries", ev.Total)
	case engine.StageTurn:
		return ev.What
	}
	return ""
}

// attempt is what a stage is about: the mode's words where it says, else its attempt or step.
func attempt(ev engine.ProgressEvent) string {
	if ev.What != "" {
		return ev.What
	}
	if ev.Attempt > 0 {
		return fmt.Sprintf("attempt %d", ev.Attempt)
	}
	return ev.Step
}

func (p *notifier) observer() engine.Observer {
	if p == nil {
		return nil
	}
	return p
}
