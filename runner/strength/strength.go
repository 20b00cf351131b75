// Package strength measures whether a verify can fail on an edited span: it runs the verify
// against small changes to the span (mutants) that a verify worth the name rejects, in a scratch
// copy of the tree, never in the person's tree or its git directories. A verify that passes every
// mutant cannot tell a wrong edit from a right one there, and a host should read the diff.
package strength

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locumdev/locum/mutate"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// Options is one measure: the verify, the tree it judges, and the kept spans.
type Options struct {
	Verify string
	// Root is the tree the verify judges.
	Root  string
	Spans []Span
	// Max is how many mutants at most, over all the spans; 0 measures nothing.
	Max int
}

// Span is one kept change: File, the edited file inside the tree, absolute; Text the file as
// kept; Start and End the span's lines in it, 1-based, inclusive.
type Span struct {
	File       string
	Text       []byte
	Start, End int
}

// Result is what the verify made of the mutants. Unknown, when set, is why no strength could be
// measured; otherwise Rejected of Run mutants were rejected, of Made the span offered.
type Result struct {
	Made, Run, Rejected int
	// Survivors describe the mutants the verify passed.
	Survivors []string
	Unknown   string
	// CommentsOnly says the change touched comments alone, which no verify can check: no mutant
	// was made.
	CommentsOnly bool
	// Control is the verify's own time on the unmutated copy; Duration the whole measure's.
	Control, Duration time.Duration
}

// String is the figure a receipt prints: K/N, or ? where none was measured.
func (r Result) String() string {
	if r.Unknown != "" {
		return "?"
	}
	return fmt.Sprintf("%d/%d", r.Rejected, r.Run)
}

// Shown says the verify rejected every mutant run, at least one: it can fail on this span.
func (r Result) Shown() bool { return r.Unknown == "" && r.Run > 0 && r.Rejected == r.Run }

// Blind says the measure did not show the verify able to fail on this span at all: it passed
// every mutant, the span offered none (comments only), or none could be run. A host should read
// the diff of such an edit.
func (r Result) Blind() bool { return r.Unknown != "" || r.Rejected == 0 }

// Words says the measure for an outcome line; advice is what to do where the verify was not
// shown able to fail ("read the diff").
func (r Result) Words(advice string) string { return r.WordsFor("the span", advice) }

// WordsFor is Words for what the mutants changed ("the span", "the kept edits").
func (r Result) WordsFor(what, advice string) string {
	switch {
	case r.Unknown != "":
		return fmt.Sprintf("the verify could not be checked against changes to %s (%s): %s", what, r.Unknown, advice)
	case r.CommentsOnly:
		return "the edit changed comments only, which no verify can check: " + advice
	case r.Made == 0:
		return fmt.Sprintf("no change to %s could be made to check the verify against (comments or blank lines only): %s", what, advice)
	case r.Rejected == 0:
		return fmt.Sprintf("the verify passed all %d changes locum made to %s, so it cannot tell a wrong edit from a right one there: %s", r.Run, what, advice)
	case r.Rejected < r.Run:
		return fmt.Sprintf("the verify rejected %d of %d changes locum made to %s; it passed: %s", r.Rejected, r.Run, what, r.Survivors[0])
	}
	return fmt.Sprintf("the verify rejected all %d changes locum made to %s", r.Run, what)
}

// controlFloor and controlFactor bound a mutant's run: a mutant that makes a loop endless must not
// hold the run for the verify's whole deadline. A mutant the verify does not finish in time is
// rejected: a test that hangs fails.
const (
	controlFloor  = 10 * time.Second
	controlFactor = 4
)

// Measure copies the tree to a scratch directory, runs the verify there on the kept file (the
// control: a verify that does not pass there cannot be measured, and says so), then on each
// mutant in turn, and removes the copy. It stops early once one mutant was rejected and another
// passed: the verify sees part of the span, which more runs would not change. Only the context's
// end is an error: the run then ends as any stopped run, its file restored.
func Measure(ctx context.Context, r *engine.Run, o Options) (Result, error) {
	start := time.Now()
	res, err := measure(ctx, r, o)
	res.Duration = time.Since(start)
	if err == nil {
		r.Emit(engine.VerifyStrengthEvent{Strength: res.String(), Made: res.Made, Run: res.Run, Rejected: res.Rejected,
			Survivors: res.Survivors, Unknown: res.Unknown, ControlMs: res.Control.Milliseconds(), DurationMs: res.Duration.Milliseconds()})
	}
	return res, err
}

func measure(ctx context.Context, r *engine.Run, o Options) (Result, error) {
	var res Result
	muts, err := mutants(o)
	if err != nil {
		res.Unknown = untrusted.Escape(err.Error())
		return res, nil
	}
	res.Made = len(muts)
	if len(muts) == 0 {
		return res, nil
	}
	scratch, err := os.MkdirTemp("", "locum-mutants-")
	if err != nil {
		res.Unknown = "no scratch directory: " + err.Error()
		return res, nil
	}
	defer func() { _ = rails.RemoveScratch(scratch) }()
	if err := rails.CopyTree(o.Root, scratch); err != nil {
		res.Unknown = "the tree could not be copied: " + err.Error()
		return res, nil
	}
	// Each file as kept, written again before each mutant of it: the verify may change it.
	write := func(sp Span, text []byte) error {
		rel, _ := filepath.Rel(o.Root, sp.File)
		file := filepath.Join(scratch, rel)
		perm := os.FileMode(0o644)
		if st, err := os.Stat(sp.File); err == nil {
			perm = st.Mode().Perm()
		}
		_ = os.Remove(file)
		return os.WriteFile(file, text, perm|0o200)
	}
	for _, sp := range o.Spans {
		if err := write(sp, sp.Text); err != nil {
			res.Unknown = "the copy could not be written: " + err.Error()
			return res, nil
		}
	}

	r.Observe(engine.ProgressEvent{Stage: engine.StageMutants, Done: 0, Total: len(muts) + 1})
	began := time.Now()
	vr, err := r.Verify(ctx, o.Verify, scratch)
	res.Control = time.Since(began)
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	if err != nil || !vr.Exited || vr.ExitCode != 0 {
		why := vr.Verdict()
		if err != nil {
			why = err.Error()
		}
		res.Unknown = "it does not pass in a copy of the tree without its git directories: " + untrusted.Escape(why)
		return res, nil
	}
	limit := max(controlFloor, controlFactor*res.Control)
	last := -1
	for i, m := range muts {
		if last >= 0 && last != m.span {
			if err := write(o.Spans[last], o.Spans[last].Text); err != nil {
				res.Unknown = "the copy could not be written: " + err.Error()
				return res, nil
			}
		}
		last = m.span
		if err := write(o.Spans[m.span], m.Text); err != nil {
			res.Unknown = "the copy could not be written: " + err.Error()
			return res, nil
		}
		r.Observe(engine.ProgressEvent{Stage: engine.StageMutants, Done: i + 1, Total: len(muts) + 1})
		mctx, cancel := context.WithTimeoutCause(ctx, limit, errMutantTimedOut)
		vr, err := r.Verify(mctx, o.Verify, scratch)
		timedOut := errors.Is(context.Cause(mctx), errMutantTimedOut)
		cancel()
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		var planted *rails.PlantedGitError
		if errors.As(err, &planted) {
			res.Unknown = "the verify left a git directory in the copy, so its verdicts are not trusted"
			return res, nil
		}
		rejected := timedOut || vr.TimedOut || !(vr.Exited && vr.ExitCode == 0)
		verdict := vr.Verdict()
		if timedOut {
			verdict = "timed out after " + limit.Round(time.Millisecond).String()
		}
		r.Emit(engine.MutantEvent{Mutation: m.Kind, Line: m.Line, Desc: m.Desc, Verdict: verdict, Rejected: rejected})
		res.Run++
		if rejected {
			res.Rejected++
		} else {
			res.Survivors = append(res.Survivors, untrusted.Escape(m.Desc))
		}
		if res.Rejected > 0 && res.Rejected < res.Run {
			break
		}
	}
	return res, nil
}

var errMutantTimedOut = errors.New("the mutant's run took too long")

// spanMutant is a mutant of one of the spans.
type spanMutant struct {
	mutate.Mutant
	span int
}

// mutants are at most o.Max mutants of o's spans, taken from each span in turn: each span's own
// list is spread over its kinds and lines already. A span outside the tree is an error.
func mutants(o Options) ([]spanMutant, error) {
	lists := make([][]mutate.Mutant, len(o.Spans))
	for i, sp := range o.Spans {
		rel, err := filepath.Rel(o.Root, sp.File)
		if err != nil || !filepath.IsLocal(rel) {
			return nil, errors.New("the file is outside the tree the verify judges")
		}
		lists[i], err = mutate.Span(filepath.Base(sp.File), sp.Text, sp.Start, sp.End, o.Max)
		if err != nil {
			return nil, err
		}
	}
	var out []spanMutant
	for round := 0; len(out) < o.Max; round++ {
		added := false
		for i, l := range lists {
			if round < len(l) && len(out) < o.Max {
				m := spanMutant{Mutant: l[round], span: i}
				if len(o.Spans) > 1 {
					// Which file each mutant changed, where the spans are in several.
					rel, _ := filepath.Rel(o.Root, o.Spans[i].File)
					m.Desc = filepath.ToSlash(rel) + " " + m.Desc
				}
				out = append(out, m)
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out, nil
}
