// Package agent is locum's agent mode: a bounded multi-file task run by a local model in a tool
// loop, in a git worktree of its own on a new branch, kept (committed) only when the operator's
// verify command passes. It uses the engine, the client and the rails, and no other mode.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/review"
)

// The closed list of an agent run's statuses (details.status).
const (
	// StatusCompleted is the one status whose branch runs accept merges.
	StatusCompleted        = review.StatusCompleted
	StatusVerifyFailed     = "verify_failed"
	StatusMaxTurns         = "max_turns"
	StatusStalled          = "stalled"
	StatusModelError       = "model_error"
	StatusContextExhausted = "context_exhausted"
	StatusRefused          = "refused"
	StatusInterrupted      = "interrupted"
	// StatusNoChange is a run whose verify passed with no file changed: nothing was done.
	StatusNoChange = "no_change"
)

// Statuses lists every status a run can end with.
var Statuses = []string{StatusCompleted, StatusVerifyFailed, StatusMaxTurns, StatusStalled, StatusModelError,
	StatusContextExhausted, StatusRefused, StatusInterrupted, StatusNoChange}

// Options is one agent task.
type Options struct {
	Task   string
	Verify string
	// From is the commit the branch starts at; "" is HEAD.
	From string
	// Root is the repository's root (the user's working tree, which the run never touches).
	Root string
	// Keep leaves the worktree and branch of a run that did not complete, for a person to read.
	Keep bool
	// ContextWindow replaces the context window the server reports; 0 asks the server.
	ContextWindow int64
}

// stop ends the loop with a status. Err is what the engine classifies (exit code, kind).
type stop struct {
	status string
	err    error
}

func (s *stop) Error() string { return s.err.Error() }
func (s *stop) Unwrap() error { return s.err }

func red(status, format string, a ...any) error {
	kind := status
	if status == StatusVerifyFailed {
		kind = "" // a red verdict, as in every mode
	}
	return &stop{status: status, err: engine.Redf(kind, format, a...)}
}

// ModelError is a model that kept answering in ways no tool loop can use. It unwraps to the
// reply error of its last reply, so it is classified (exit 2) as every mode's bad reply is.
type ModelError struct {
	Detail string
	Reply  *rails.ReplyError
}

func (e *ModelError) Error() string { return e.Detail }
func (e *ModelError) Unwrap() error { return e.Reply }

func modelError(class rails.ReplyClass, detail string) error {
	return &stop{status: StatusModelError, err: &ModelError{Detail: detail, Reply: &rails.ReplyError{Class: class, Detail: detail}}}
}

// agent is the state of one run.
type agent struct {
	opts      Options
	base      string // the commit the branch starts at
	wt        string // the worktree, resolved
	branch    string
	created   bool // the worktree and branch exist
	committed bool
	ws        *workspace
	conv      *conversation
	rounds    []engine.VerifyRound
	status    string
	// d are the run's details.
	d engine.AgentDetails
	// baseline is the verify's verdict before the run changed anything (engine.Baseline).
	baseline string
	// noise is what git shows changed in the worktree straight after its checkout, by path.
	noise map[string]string
	// undone are the files settle put back after a verify changed them, over the whole run.
	undone map[string]bool
	// settleErr is a settle after run_verify that failed: the loop stops on it.
	settleErr error
	// writes counts the tool calls that changed the worktree, and gated their count when the
	// verify gate last ran: equal, the last gate judged the worktree as it stands.
	writes, gated int
}

// Steps is the agent workflow: scope (inputs, the repository, the first prompt under the input
// budget), connect (the loopback check, the server's context window), worktree (a new branch from
// --from, removed on every exit path unless kept), baseline (the verify once on the worktree as
// it starts), and loop (the tool loop, then the verify gate with its fix rounds, then the commit;
// a run that changed no file ends no_change).
func Steps(opts Options) []engine.Step {
	a := &agent{opts: opts}
	return []engine.Step{
		{Name: "scope", Run: a.wrap(a.scope)},
		{Name: "connect", Run: a.wrap(a.connect)},
		{Name: "worktree", Run: a.wrap(a.worktree)},
		{Name: "baseline", Run: a.wrap(func(ctx context.Context, r *engine.Run) (err error) {
			if a.baseline, err = r.Baseline(ctx, a.opts.Verify, a.wt); err != nil || a.baseline == engine.BaselineSkipped {
				return err
			}
			_, err = a.settle(ctx, r, "baseline")
			return err
		})},
		{Name: "loop", Run: a.wrap(a.loop)},
	}
}

// wrap records the run's closed status in its details whichever step ends it.
func (a *agent) wrap(fn func(context.Context, *engine.Run) error) func(context.Context, *engine.Run) error {
	return func(ctx context.Context, r *engine.Run) error {
		err := fn(ctx, r)
		if err != nil && a.status == "" {
			a.status = statusOf(err)
		}
		if a.status != "" {
			a.d.Status = new(a.status)
		}
		if a.conv != nil {
			a.d.Turns = a.conv.turns
		}
		return unwrapStop(err)
	}
}

func unwrapStop(err error) error {
	var s *stop
	if errors.As(err, &s) {
		return s.err
	}
	return err
}

// statusOf maps what ended a run to its closed status.
func statusOf(err error) string {
	var s *stop
	if errors.As(err, &s) {
		return s.status
	}
	status, kind, _ := engine.Classify(err)
	switch {
	case kind == "signal":
		return StatusInterrupted
	case kind == "verify_no_verdict" || kind == "verify_planted_git":
		return StatusVerifyFailed
	case kind == "context_window" || kind == "input_truncated":
		// The engine's own check of the prompt against the loaded context, or a server that cut
		// the prompt: the conversation did not fit.
		return StatusContextExhausted
	case status == engine.StatusRefused || kind == "bad_input":
		return StatusRefused
	}
	return StatusModelError
}

func (a *agent) scope(ctx context.Context, r *engine.Run) error {
	a.d = engine.AgentDetails{FilesChanged: []string{}, VerifyRounds: []engine.VerifyRound{}, VerifyUndone: []string{}}
	r.SetDetails(&a.d)
	r.SetHandoff(a.handoff)
	// Until a change is committed, the job is the host's to do: at the least one file read and
	// edited and the verify run; the delegation is the call.
	r.HostWork(engine.HostWork{Turns: cost.Turns{Direct: directTurns(1, 1), Delegated: 1}})
	if strings.TrimSpace(a.opts.Verify) == "" {
		return engine.BadInputf("{verify} is empty: give a command whose exit 0 means the task is done")
	}
	if strings.TrimSpace(a.opts.Task) == "" {
		return &engine.BadInputError{Reason: "the task is empty: say what to change"}
	}
	top, err := gitsafe.Run(ctx, a.opts.Root, "rev-parse", "--show-toplevel")
	if err != nil {
		return &engine.BadInputError{Reason: fmt.Sprintf("%s is not in a git repository; locum agent works on a branch of one", a.opts.Root)}
	}
	a.opts.Root = strings.TrimSpace(top)
	from := a.opts.From
	if from == "" {
		from = "HEAD"
	}
	if strings.HasPrefix(from, "-") {
		return engine.BadInputf("{from} %q is not a commit", from)
	}
	sha, err := gitsafe.Run(ctx, a.opts.Root, "rev-parse", "--verify", "--quiet", "--end-of-options", from+"^{commit}")
	if err != nil || !gitsafe.ValidSHA(strings.TrimSpace(sha)) {
		return engine.BadInputf("{from} %s names no commit of this repository", from)
	}
	a.base = strings.TrimSpace(sha)
	a.d.Base = new(a.base)
	first := firstMessages(a.opts.Task, a.opts.Verify)
	r.Emit(engine.AgentScopeEvent{Base: a.base, Verify: new(a.opts.Verify), PromptBytes: size(first), Task: a.opts.Task})
	if n, limit := int64(size(first)+toolBytes()), r.Spec.Settings.Int(packs.MaxInputBytes); n > limit {
		return &rails.BudgetError{What: "the first prompt (instructions, task and tool list)", Size: n, Limit: limit, Remedy: "shorten the task"}
	}
	return nil
}

func (a *agent) connect(ctx context.Context, r *engine.Run) error {
	if err := r.ConnectChat(ctx); err != nil {
		return err
	}
	window := a.opts.ContextWindow
	if window == 0 {
		info, err := r.Client.Probe(ctx)
		if err != nil {
			return err
		}
		window = info.ContextOf(r.Spec.Model)
	}
	r.Emit(engine.ContextEvent{ContextWindow: nilIfZero(window)})
	a.conv = newConversation(r.Spec.Settings, window)
	return nil
}

func nilIfZero(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

// BranchPrefix starts the name of every agent branch.
const BranchPrefix = "locum/agent/"

// Branch is the branch of run id.
func Branch(id string) string { return BranchPrefix + id }

func (a *agent) worktree(ctx context.Context, r *engine.Run) error {
	a.branch = Branch(r.ID)
	wt, err := gitsafe.WorktreeDir(a.opts.Root, r.ID)
	if err != nil {
		return err
	}
	a.wt = wt
	if err := os.MkdirAll(filepath.Dir(a.wt), 0o755); err != nil {
		return fmt.Errorf("making the worktree folder: %w", err)
	}
	r.Guard("worktree", func() error { return a.cleanup(r) })
	// Another run of this process (a bench's cell) may be adding or pruning a worktree of the
	// same repository: git fails an add that meets one half made.
	if _, err := gitsafe.RunLocked(ctx, a.opts.Root, a.opts.Root, "worktree", "add", "--quiet", "-b", a.branch, a.wt, a.base); err != nil {
		return fmt.Errorf("creating the worktree: %w", err)
	}
	a.created = true
	real, err := filepath.EvalSymlinks(a.wt)
	if err != nil {
		return err
	}
	a.wt = real
	a.ws = newWorkspace(real, nil)
	a.ws.verify = a.verifyTool(r)
	noise, err := status(ctx, a.wt)
	if err != nil {
		return err
	}
	a.noise, a.undone = map[string]string{}, map[string]bool{}
	for _, e := range noise {
		a.noise[e.path] = e.xy
	}
	r.Emit(engine.WorktreeEvent{Path: a.wt, Branch: a.branch, Base: a.base})
	return nil
}

// verifyTool is run_verify: the operator's command in the worktree, then settle. The model is
// told what the verify changed and was put back, so it does not look for its own bytes there.
func (a *agent) verifyTool(r *engine.Run) func(ctx context.Context) (string, error) {
	run := verifyTool(a.opts.Verify, a.wt, r.Verify)
	return func(ctx context.Context) (string, error) {
		r.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Step: "loop", Attempt: a.conv.turns, What: fmt.Sprintf("run_verify in turn %d", a.conv.turns)})
		out, err := run(ctx)
		if err != nil {
			return out, err
		}
		files, err := a.settle(ctx, r, "run_verify")
		if err != nil {
			a.settleErr = err
			return "", err
		}
		if len(files) > 0 {
			out += fmt.Sprintf("\n(The verify command changed %s; locum put back what your tools wrote and the rest as the base commit has it. Only your tools' writes count.)", strings.Join(files, ", "))
		}
		return out, nil
	}
}

// cleanup runs on every exit path: a committed run keeps its branch (the worktree goes, the
// branch holds the work); --keep keeps both; anything else leaves nothing.
func (a *agent) cleanup(r *engine.Run) error {
	if !a.created && a.wt == "" {
		return nil
	}
	// The run's context may be cancelled (a signal); the cleanup must still finish.
	ctx, cancel := context.WithTimeout(context.Background(), gitsafe.Timeout)
	defer cancel()
	if a.opts.Keep && !a.committed {
		a.d.Worktree, a.d.Branch = new(a.wt), new(a.branch)
		return nil
	}
	err := gitsafe.RemoveWorktree(ctx, a.opts.Root, a.wt)
	if a.committed {
		a.d.Branch = new(a.branch)
		return err
	}
	return errors.Join(err, gitsafe.DeleteBranch(ctx, a.opts.Root, a.branch))
}

// gate runs the verify command on the worktree as it stands: round n of the verify after finish.
func (a *agent) gate(ctx context.Context, r *engine.Run, n int) (rails.ShellResult, error) {
	r.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Step: "loop", Attempt: a.conv.turns, What: fmt.Sprintf("round %d of %d, after finish", n, a.conv.rounds+1)})
	start := time.Now()
	vr, err := r.Verify(ctx, a.opts.Verify, a.wt)
	if err != nil {
		return vr, err
	}
	tail := string(vr.Output)
	var exit *int
	if vr.Exited {
		exit = &vr.ExitCode
	}
	a.rounds = append(a.rounds, engine.VerifyRound{Round: n, Verdict: vr.Verdict(), Exit: exit})
	a.gated = a.writes
	a.d.VerifyRounds, a.d.VerifyTail = a.rounds, new(tail)
	r.Emit(engine.VerifyRoundEvent{Round: n, Verdict: vr.Verdict(), Exit: exit, DurationMs: time.Since(start).Milliseconds(), Tail: tail})
	if vr.Canceled {
		return vr, nil
	}
	_, err = a.settle(ctx, r, "verify")
	return vr, err
}

// commit commits the files the tools wrote on the run's branch, as they wrote them (settle put
// back whatever the verify changed of them).
func (a *agent) commit(ctx context.Context, r *engine.Run, summary string) error {
	var paths []string
	for rel := range a.ws.wrote {
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		// A file the repository ignores stays out of the commit, as it would for git add.
		ignored, _ := gitsafe.Run(ctx, a.wt, append([]string{"check-ignore", "--"}, paths...)...)
		skip := map[string]bool{}
		for _, p := range strings.Split(ignored, "\n") {
			skip[p] = p != ""
		}
		var add []string
		for _, p := range paths {
			if !skip[p] {
				add = append(add, ":(literal)"+p)
			}
		}
		if len(add) > 0 {
			if _, err := gitsafe.Run(ctx, a.wt, append([]string{"add", "--"}, add...)...); err != nil {
				return err
			}
		}
	}
	names, err := gitsafe.Run(ctx, a.wt, "diff", "--no-ext-diff", "--no-textconv", "--cached", "--name-only", "-z", a.base)
	if err != nil {
		return err
	}
	files := []string{}
	for _, n := range strings.Split(names, "\x00") {
		if n != "" {
			files = append(files, n)
		}
	}
	a.d.FilesChanged = files
	if len(files) == 0 {
		r.Emit(engine.AgentCommitEvent{Files: files})
		return &stop{status: StatusNoChange, err: &engine.RedError{Kind: StatusNoChange, Reason: "the verify passed, but the run changed no file: nothing was done"}}
	}
	a.d.Shown = engine.Shown(a.baseline)
	stat, _ := gitsafe.Run(ctx, a.wt, "diff", "--no-ext-diff", "--no-textconv", "--cached", "--shortstat", a.base)
	a.d.DiffStat = new(strings.TrimSpace(stat))
	if diff, err := gitsafe.Run(ctx, a.wt, "diff", "--cached", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", a.base); err == nil {
		w := hostWork(a.wt, files, diff)
		// Done directly: each changed file read and edited, and the verify run once a round
		// this run needed; delegated: the call, the review of the branch and its accept.
		w.Turns = cost.Turns{Direct: directTurns(len(files), len(a.rounds)), Delegated: 3}
		r.HostWork(w)
	}
	msg := fmt.Sprintf("locum agent: %s\n\n%s\n\nRun %s; verify `%s` exited 0.\n", firstLine(a.opts.Task, 60), strings.TrimSpace(summary), r.ID, a.opts.Verify)
	args := append(gitsafe.Identity(ctx, a.wt), "commit", "--quiet", "--no-verify", "-m", msg)
	if _, err := gitsafe.Run(ctx, a.wt, args...); err != nil {
		return err
	}
	sha, err := gitsafe.Run(ctx, a.wt, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	a.committed = true
	a.d.Commit = new(strings.TrimSpace(sha))
	r.Emit(engine.AgentCommitEvent{Commit: new(strings.TrimSpace(sha)), Files: files, DiffStat: strings.TrimSpace(stat)})
	return nil
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// directTurns are the host turns of doing an agent's job itself: each file read, then edited,
// and the verify run once a round, each red round an edit more.
func directTurns(files, rounds int) int64 {
	return int64(2*files + max(rounds, 1) + 2*max(rounds-1, 0))
}

// hostWork is what a host doing the agent's job itself would have spent: read the files the run
// changed, write their changed lines (an edit tool's old and new text), and what it reviews of
// the run's work, the diff without context.
func hostWork(wt string, files []string, diff string) engine.HostWork {
	w := engine.HostWork{Review: int64(len(diff))}
	for _, f := range files {
		if st, err := os.Lstat(filepath.Join(wt, filepath.FromSlash(f))); err == nil && st.Mode().IsRegular() {
			w.Read += st.Size()
		}
	}
	for _, line := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++")) || (strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---")) {
			w.Write += int64(len(line))
		}
	}
	return w
}
