// Package transform is locum's transform mode: one span of one file edited by the model and kept
// only when the operator's verify command passes, restored otherwise.
package transform

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locumdev/locum/editcheck"
	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
)

// Options is one verify-gated edit.
type Options struct {
	File  string // as the user gave it
	Lines string // "" for the whole file
	// Symbol, instead of Lines, names a declaration whose lines are the span (scope.SymbolRange).
	Symbol string
	Verify string
	Task   string
	Cwd    string
	Root   string
	// RollbackKey authenticates the crash record (rails.LoadRollbackKey); nil keeps no record,
	// so only the in-process restore protects the file.
	RollbackKey []byte
	// PayGate refuses a span too small to pay (engine.Place); nil lets every span go ahead.
	PayGate func(lines int) error
}

// directEditTurns are the host turns of one round of doing the edit itself: the edit, then
// running the verify (whose verdict the next turn reads).
const directEditTurns = 2

// ContextLines is how many lines around the span the prompt shows, read-only.
const ContextLines = 3

const spanInstruction = `You edit one span of a file to do a task. Reply with the complete new text of the span inside one fenced code block, and nothing else. Keep the code style. Do not repeat the context lines shown around the span; they stay as they are. If the span must become empty, reply with an empty block.`

const blocksInstruction = `You edit one span of a file to do a task. Reply only with SEARCH/REPLACE blocks:
<<<<<<< SEARCH
exact lines copied from the span
=======
their replacement
>>>>>>> REPLACE
Each SEARCH text must occur exactly once in the span. Keep the code style.`

// transform is the state of one transform run.
type transform struct {
	opts     Options
	path     string     // absolute
	display  string     // relative to the root where possible
	text     scope.Text // current content
	start, n int        // current span: n lines from start (1-based)
	orig     scope.LineRange
	origSpan []string
	guard    *rails.FileGuard
	wrote    bool // an edit reached the file
	kept     bool
	// restored says the baseline's verify changed the file and it was put back; restoreFailed
	// says that failed and was reported, so the guard keeps the copy on the way out without
	// trying again.
	restored, restoreFailed bool
	// editing says the edit step began: a run refused before it has no outcome to tell.
	editing bool
	// baseline is the verify's verdict before any edit (engine.Baseline).
	baseline string
	// readTurns and readBytes are what reading the span would cost the host: none where it
	// said it holds the span already.
	readTurns, readBytes int64
	// doc is the doc comment the span of a --symbol begins with, kept when a reply leaves it out;
	// comment is how a line comment of the file's language begins.
	doc     []string
	comment string
	// decl says the span is one Go declaration: a reply must then be one of its kind and name.
	decl bool
	// verified is the last attempt whose edit the verify judged red, written the file as
	// verifiedText, and verifiedTail what the verify said: the red run's handoff.
	verified     int
	verifiedText string
	verifiedTail string
	// d are the run's details.
	d Details
}

// Details are a transform's part of its result and of its journal's run_end.
type Details struct {
	// SpanDetails are the span, once scope read it.
	engine.SpanDetails
	// Outcome is what became of the file: kept, restored, unchanged or restore_failed; "" for a
	// run that never reached it.
	Outcome string `json:"outcome,omitempty"`
	// VerifyExit is the last verify's exit code, null where it gave none or no edit was verified;
	// left out before the first verify and the end of the attempts.
	VerifyExit **int `json:"verify_exit,omitempty"`
	// VerifyTail is the end of the last verify's output.
	VerifyTail *string `json:"verify_tail,omitempty"`
	// Kept is what a kept edit adds, nil for any other outcome.
	*Kept
	// StrengthDetails are the verify's strength on the kept span, where it was measured.
	engine.StrengthDetails
}

// Kept are what a kept edit adds to the details: its size, its changed lines old then new under
// the file and line (Changes), and what its green verify showed by the baseline.
type Kept struct {
	Diff    string `json:"diff"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Changes string `json:"changes"`
	engine.ShownDetails
}

// exitOf is a verify's exit code as the details' VerifyExit holds it: null where code is nil.
func exitOf(code *int) **int { return &code }

// Steps is the transform workflow: scope the span under the input budget, check the
// endpoint, guard the file (its snapshot and synced crash copy, of the bytes scope read), run the
// verify once on the unchanged file (the baseline), then edit and verify until the verify command
// exits 0 or the attempts run out. The guard comes before the first process locum starts, so the
// file ends as the passing edit or as its original bytes and mode whatever any verify does to it,
// the baseline's included.
func Steps(opts Options) []engine.Step {
	t := &transform{opts: opts}
	return []engine.Step{
		{Name: "scope", Run: t.scope},
		{Name: "connect", Run: func(ctx context.Context, r *engine.Run) error { return r.ConnectChat(ctx) }},
		{Name: "guard", Run: t.guardFile},
		{Name: "baseline", Run: t.runBaseline},
		{Name: "edit", Run: t.edit},
	}
}

// runBaseline runs the verify on the unchanged file. A verify that changes the file there (a
// formatter run with -w, a generator, a test that rewrites its fixture) cannot judge an edit: what
// it passes or fails is not the file the model wrote. The file is put back at once and the run
// ends, before any request.
func (t *transform) runBaseline(ctx context.Context, r *engine.Run) (err error) {
	t.baseline, err = r.Baseline(ctx, t.opts.Verify, t.opts.Root)
	if ctx.Err() != nil || t.guard.Intact() {
		return err
	}
	changed := &engine.VerifyWroteError{Command: t.opts.Verify, Files: []string{t.display}, Before: true}
	r.Emit(engine.VerifyWroteEvent{Step: "baseline", Files: changed.Files})
	if rerr := t.guard.Restore(); rerr != nil {
		t.restoreFailed = true
		t.d.Outcome = "restore_failed"
		return errors.Join(changed, rerr)
	}
	changed.Restored, t.restored = true, true
	t.d.Outcome = "restored"
	return changed
}

func (t *transform) scope(ctx context.Context, r *engine.Run) error {
	r.SetDetails(&t.d)
	r.SetHandoff(t.handoff)
	if strings.TrimSpace(t.opts.Verify) == "" {
		return engine.BadInputf("{verify} is empty: give a command whose exit 0 means the task is done")
	}
	if strings.TrimSpace(t.opts.Task) == "" {
		return &engine.BadInputError{Reason: "the task is empty: say what to change"}
	}
	sc, err := scope.Read(r, t.opts.Cwd, t.opts.Root, t.opts.File, t.opts.Lines, t.opts.Symbol)
	if err != nil {
		return err
	}
	t.path, t.display, t.text, t.orig = sc.Path, sc.Display, sc.Text, sc.Range
	t.d.SpanDetails = sc.Details()
	t.start, t.n = sc.Range.Start, sc.Range.End-sc.Range.Start+1
	t.origSpan = t.span()
	if strings.TrimSpace(t.opts.Symbol) != "" {
		t.comment = "//"
		if scope.Language(t.display) == "Python" {
			t.comment = "#"
		}
		t.doc = docComment(t.origSpan, t.comment)
	}
	if scope.Language(t.display) == "Go" {
		_, _, t.decl = editcheck.IsDecl(strings.Join(t.origSpan, "\n"))
	}
	if err := t.checkGuardable(r.Spec.Settings); err != nil {
		return err
	}
	// Until an edit is kept, the job is the host's to do: read the span (unless it holds it
	// already), write it anew, run the verify; the delegation is the one call.
	span := spanBytes(t.origSpan)
	t.readTurns, t.readBytes = 1, span
	if r.Spec.Settings.Bool(packs.HostHoldsSpan) {
		t.readTurns, t.readBytes = 0, 0
	}
	r.HostWork(engine.HostWork{Read: t.readBytes, Write: span, Turns: cost.Turns{Direct: t.readTurns + directEditTurns, Delegated: 1}})
	if t.opts.PayGate != nil {
		if err := t.opts.PayGate(t.n); err != nil {
			return err
		}
	}
	prompt := t.prompt(r.Spec.Settings.String(packs.EditFormat), "")
	ev := engine.FileScopeEvent{File: t.display, Verify: new(t.opts.Verify), Lines: t.orig.String(), FileLines: len(t.text.Lines),
		PromptBytes: scope.PromptBytes(prompt), Task: t.opts.Task}
	if ev.Base = gitsafe.TopHead(ctx, t.opts.Root); ev.Base != "" {
		sum := sha256.Sum256([]byte(t.text.Join()))
		ev.FileSHA256 = hex.EncodeToString(sum[:])
	}
	r.Emit(ev)
	return rails.CheckBudget("the prompt", int64(scope.PromptBytes(prompt)), r.Spec.Settings.Int(packs.MaxInputBytes))
}

func (t *transform) span() []string {
	return append([]string(nil), t.text.Lines[t.start-1:t.start-1+t.n]...)
}

func (t *transform) guardFile(_ context.Context, r *engine.Run) error {
	g, err := rails.GuardFile(t.path, rails.Rollback{Dir: RollbackDir(t.opts.Root), Root: t.opts.Root, Key: t.opts.RollbackKey})
	if err != nil {
		return &engine.BadInputError{Reason: err.Error()}
	}
	// The snapshot must be the bytes the span was read from: a file rewritten in between would be
	// restored to bytes the run never saw, and edited from a text that is not the file's.
	if !bytes.Equal(g.Original(), []byte(t.text.Join())) {
		g.Release()
		return &engine.BadInputError{Reason: fmt.Sprintf("%s changed while locum read it; nothing was done: run again once nothing else is writing it", t.display)}
	}
	t.guard = g
	r.Guard("restore "+t.display, func() error {
		switch {
		case t.kept:
			g.Release()
			return nil
		case t.restoreFailed:
			g.Keep()
			return nil
		case g.Intact():
			// What is on disk decides, not what this run wrote: any verify may have changed the
			// file, and one that wrote it back as it was leaves nothing to do.
			g.Release()
			switch {
			case t.wrote || t.restored:
				t.d.Outcome = "restored"
			case t.editing:
				t.d.Outcome = "unchanged"
			}
			return nil
		}
		if err := g.Restore(); err != nil {
			// The copy is the only one left: it stays for locum recover.
			g.Keep()
			t.d.Outcome = "restore_failed"
			return err
		}
		g.Release()
		t.d.Outcome = "restored"
		return nil
	})
	return nil
}

// RollbackDir is where crash records live: under the git directory, or under .locum outside a
// repository (see RepoStateDir).
func RollbackDir(root string) string {
	if p := gitsafe.GitPath(root, "locum/rollback"); p != "" {
		return p
	}
	return engine.RepoStateDir(root, "rollback")
}

// A reply rewrites the span, so its room follows the span's size: twice its tokens (at
// spanBytesPerToken, an underestimate of code's bytes a token, so an overestimate of its tokens),
// and never less than replyFloor, room for a task that adds a function to a short span; within
// max_output_tokens. A small model that loops then stops in well under a minute, not after the
// thousands of tokens a pack's ceiling allows; a max_output_tokens the user chose is the room
// asked for.
const (
	spanBytesPerToken = 3
	replyFloor        = 1024
)

// replyRoom is the max_tokens an edit asks for.
func (t *transform) replyRoom(s *packs.Settings) int64 {
	ceiling := s.Int(packs.MaxOutputTokens)
	if s.OverridesBuiltin(packs.MaxOutputTokens) {
		return ceiling
	}
	bytes := 0
	for _, l := range t.origSpan {
		bytes += len(l) + 1
	}
	return min(ceiling, max(replyFloor, int64(2*bytes/spanBytesPerToken)))
}

func (t *transform) edit(ctx context.Context, r *engine.Run) error {
	t.editing = true
	s := r.Spec.Settings
	format := s.String(packs.EditFormat)
	maxAttempts := int(s.Int(packs.MaxAttempts))
	feedback := ""
	var lastExit *int
	lastTail := ""
	// rejected maps each span the verify judged red to its attempt: the same edit again is
	// neither written nor verified.
	rejected := map[string]int{}
	toldRepeat := false
	unchanged := 0
	// checked is why the last reply failed the checks before the verify; "" once one passed.
	checked := ""
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		prompt := t.prompt(format, feedback)
		if err := rails.CheckBudget("the retry prompt", int64(scope.PromptBytes(prompt)), s.Int(packs.MaxInputBytes)); err != nil {
			return err
		}
		temperature, seed := engine.RetrySampling(attempt)
		res, err := r.Chat(ctx, "edit", client.ChatRequest{
			Model: r.Spec.Model, Messages: prompt, MaxTokens: t.replyRoom(s), Effort: s.String(packs.Effort), Stream: true, Narrow: scope.NarrowSettings,
			Temperature: temperature, Seed: seed,
		})
		if err != nil {
			return err
		}
		repl, err := t.parse(format, res.Answer)
		if err != nil {
			r.Emit(engine.AttemptEvent{Attempt: attempt, EditError: err.Error()})
			feedback = "Your reply could not be applied: " + err.Error()
			continue
		}
		if format == "span" && t.decl {
			if kept, clause := editcheck.DropPackageClause(t.origSpan, repl); clause != "" {
				r.Emit(engine.PackageDroppedEvent{Attempt: attempt, Clause: clause})
				repl = kept
			}
		}
		if reason, retry := t.shapeReply(format, repl); reason != "" {
			checked = reason
			r.Emit(engine.AttemptEvent{Attempt: attempt, Checks: reason})
			feedback = retry
			continue
		}
		if format == "span" {
			if kept := t.keepDoc(repl); len(kept) != len(repl) {
				r.Emit(engine.DocKeptEvent{Attempt: attempt, Lines: len(t.doc)})
				repl = kept
			}
		}
		edit := strings.Join(repl, "\n")
		if earlier, ok := rejected[edit]; ok {
			r.Emit(engine.AttemptEvent{Attempt: attempt, Repeated: earlier})
			if toldRepeat {
				return &engine.RedError{Kind: "repeated", Reason: fmt.Sprintf("attempt %d repeated the edit of attempt %d, which the verify rejected, after being told; the file was restored", attempt, earlier)}
			}
			toldRepeat = true
			feedback = fmt.Sprintf("Your edit is the same as the edit of attempt %d, which the verify command rejected. It was not tried again: write a different edit.\n\n%s", earlier, feedback)
			continue
		}
		if slices.Equal(repl, t.span()) || slices.Equal(repl, t.origSpan) {
			unchanged++
			r.Emit(engine.AttemptEvent{Attempt: attempt, Unchanged: true})
			feedback = "Your reply leaves the span as it was before the task. Change it to do the task."
			continue
		}
		next := t.text.Replace(t.start, t.start+t.n-1, repl)
		written := []byte(next.Join())
		if reason, retry := t.guardEdit(s, written); reason != "" {
			checked = reason
			r.Emit(engine.AttemptEvent{Attempt: attempt, Checks: reason})
			feedback = retry
			continue
		}
		checked = ""
		t.wrote = true
		if err := t.guard.Write(written); err != nil {
			return fmt.Errorf("writing %s: %w", t.display, err)
		}
		t.text, t.n = next, len(repl)
		r.Emit(engine.AttemptEvent{Attempt: attempt, SpanLines: new(t.n)})

		r.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Step: "edit", Attempt: attempt})
		vr, err := r.Verify(ctx, t.opts.Verify, t.opts.Root)
		if err != nil {
			return err
		}
		tail := string(vr.Output)
		r.Emit(engine.VerifyEvent{Attempt: attempt, Verdict: vr.Verdict(), DurationMs: vr.Duration.Milliseconds(), Tail: tail})
		lastTail = tail
		t.d.VerifyTail = new(tail)
		switch {
		case vr.Canceled:
			t.d.VerifyExit = exitOf(nil)
			return context.Cause(ctx)
		case vr.Exited && vr.ExitCode == 0:
			// The verdict is on the edit as it was written; what the verify left in the file (a
			// formatter's bytes, an appended line) is its output, not the edit, and is not kept.
			if !t.guard.Holds(written) {
				r.Emit(engine.VerifyWroteEvent{Step: "edit", Attempt: attempt, Files: []string{t.display}})
				if err := t.guard.Write(written); err != nil {
					return fmt.Errorf("putting the edit back in %s after the verify changed it: %w", t.display, err)
				}
			}
			st, err := t.measure(ctx, r, written)
			if err != nil {
				return err
			}
			t.kept = true
			add, del := DiffStat(t.origSpan, t.span())
			t.d.VerifyExit = exitOf(new(0))
			t.d.Outcome = "kept"
			// The host would have typed the changed lines, old and new, as an edit tool takes
			// them, and taken the edit and the verify again for each red round this run
			// needed; it reviews the edit as the compact diff, without reading the file, or
			// where that was cut, in one more turn reading the file's diff.
			ch := Changes(t.display, t.start, t.origSpan, t.span())
			t.d.Kept = &Kept{Diff: fmt.Sprintf("+%d -%d", add, del), Added: add, Removed: del, Changes: ch.Text,
				ShownDetails: engine.ShownDetails{Shown: engine.Shown(t.baseline)}}
			w := engine.HostWork{Read: t.readBytes, Write: ch.Old + ch.New, Review: int64(len(ch.Text)), ReviewInResult: true,
				Turns: cost.Turns{Direct: t.readTurns + directEditTurns*int64(attempt), Delegated: 1}}
			// A cut diff, or a verify not shown able to fail on the span, sends the host to read
			// the change in the file, one turn more.
			if ch.Cut || st != nil && st.Blind() {
				w.Review += ch.Old + ch.New
				w.Turns.Delegated++
			}
			r.HostWork(w)
			return nil
		case vr.Exited && vr.ExitCode == 1:
			lastExit = new(1)
			rejected[edit] = attempt
			t.verified, t.verifiedText, t.verifiedTail = attempt, string(written), tail
			t.d.VerifyExit = exitOf(lastExit)
			feedback = fmt.Sprintf("Your edit was applied, but the verify command `%s` exited 1. The end of its output:\n```\n%s\n```\nFix the span so the command passes.", t.opts.Verify, strings.TrimRight(tail, "\n"))
		default:
			if vr.Exited {
				t.d.VerifyExit = exitOf(new(vr.ExitCode))
			} else {
				t.d.VerifyExit = exitOf(nil)
			}
			return &engine.NoVerdictError{Command: t.opts.Verify, Verdict: vr.Verdict(), Tail: tail}
		}
	}
	t.d.VerifyExit = exitOf(lastExit)
	t.d.VerifyTail = new(lastTail)
	if lastExit == nil && checked != "" && !t.wrote {
		return &engine.RedError{Kind: "checks", Reason: guardWords(checked) + "; the file is unchanged"}
	}
	if lastExit == nil && unchanged > 0 && !t.wrote {
		return &engine.RedError{Kind: "unchanged", Reason: fmt.Sprintf("%s left the span as it is: nothing was done; the file is unchanged", client.Count(unchanged, "reply", "replies"))}
	}
	if lastExit == nil {
		// No edit reached the file, so there was nothing to restore.
		return &engine.RedError{Reason: fmt.Sprintf("no attempt of %d produced an edit that could be applied (%s); the file is unchanged", maxAttempts, strings.TrimPrefix(feedback, "Your reply could not be applied: "))}
	}
	return &engine.RedError{Reason: fmt.Sprintf("the verify command still exits 1 after %s; the file was restored\n%s", client.Count(maxAttempts, "attempt", "attempts"), engine.IndentTail(lastTail, 10))}
}

func (t *transform) parse(format, answer string) ([]string, error) {
	switch format {
	case "blocks":
		blocks, err := ParseBlocks(answer)
		if err != nil {
			return nil, err
		}
		return ApplyBlocks(t.span(), blocks)
	case "insert":
		lines, err := SpanReplacement(answer)
		if err != nil {
			return nil, err
		}
		return t.insertReply(lines), nil
	}
	return SpanReplacement(answer)
}

// prompt builds the messages for one attempt: the fixed instruction, then the file's name and
// language, the task, the span between a few read-only context lines, and any feedback.
func (t *transform) prompt(format, feedback string) []client.Message {
	instruction := spanInstruction
	switch format {
	case "blocks":
		instruction = blocksInstruction
	case "insert":
		instruction = insertInstruction
	}
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s (%s)\nTask: %s\n\n", t.display, scope.Language(t.display), strings.TrimSpace(t.opts.Task))
	end := t.start + t.n - 1
	before := t.text.Lines[max(0, t.start-1-ContextLines) : t.start-1]
	after := t.text.Lines[min(len(t.text.Lines), end):min(len(t.text.Lines), end+ContextLines)]
	if len(before) > 0 {
		fmt.Fprintf(&b, "Context before the span (keep out of your reply):\n```\n%s\n```\n", strings.Join(before, "\n"))
	}
	what := "The span,"
	if sym := strings.TrimSpace(t.opts.Symbol); sym != "" && t.start == t.orig.Start {
		what = "The span, the declaration of " + sym + ","
	}
	fmt.Fprintf(&b, "%s lines %d-%d of %d:\n```\n%s\n```\n", what, t.start, end, len(t.text.Lines), strings.Join(t.span(), "\n"))
	if len(after) > 0 {
		fmt.Fprintf(&b, "Context after the span (keep out of your reply):\n```\n%s\n```\n", strings.Join(after, "\n"))
	}
	if feedback != "" {
		fmt.Fprintf(&b, "\n%s\n", feedback)
	}
	return []client.Message{{Role: "system", Content: instruction}, {Role: "user", Content: b.String()}}
}

// docComment is the doc comment a declaration's span begins with: its leading lines that start
// with comment (// or, in Python, #), or a leading /* */ block where comment is //.
func docComment(span []string, comment string) []string {
	n := 0
	for n < len(span) && strings.HasPrefix(strings.TrimSpace(span[n]), comment) {
		n++
	}
	if n == 0 && comment == "//" && len(span) > 0 && strings.HasPrefix(strings.TrimSpace(span[0]), "/*") {
		for n < len(span) {
			n++
			if _, after, ok := strings.Cut(span[n-1], "*/"); ok {
				if strings.TrimSpace(after) != "" {
					return nil // code follows the comment on its line: no doc of its own
				}
				break
			}
		}
	}
	if n == 0 || n == len(span) {
		return nil // no comment, or all comment: no declaration follows it
	}
	return slices.Clone(span[:n])
}

// keepDoc puts the declaration's doc comment back in front of a reply that carries none of its
// own: a model asked to change a function often writes the function alone.
func (t *transform) keepDoc(repl []string) []string {
	if len(t.doc) == 0 {
		return repl
	}
	for _, l := range repl {
		if trimmed := strings.TrimSpace(l); trimmed != "" {
			if strings.HasPrefix(trimmed, t.comment) || t.comment == "//" && strings.HasPrefix(trimmed, "/*") {
				return repl
			}
			break
		}
	}
	if len(repl) == 0 {
		return repl // a reply that empties the span removes the declaration, doc and all
	}
	return append(slices.Clone(t.doc), repl...)
}
