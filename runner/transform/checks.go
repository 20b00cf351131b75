package transform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locumdev/locum/editcheck"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/runner/strength"
	"github.com/locumdev/locum/untrusted"
)

// insertInstruction asks for lines to insert at the top of the span: nothing the span holds can
// change, which is what a documentation or guard-clause job needs.
const insertInstruction = `You add lines to one span of a file to do a task. Reply with only the new lines to insert at the top of the span, inside one fenced code block, and nothing else. The span stays as it is below them; do not repeat it. Keep the code style.`

// checkGuardable refuses, before any request, an edit guard the file cannot be held to: only a Go
// file is read as a syntax tree, and under signature only one that parses.
func (t *transform) checkGuardable(s *packs.Settings) error {
	guard := s.String(packs.EditGuard)
	if guard == editcheck.GuardSpan {
		return nil
	}
	var unsupported *editcheck.UnsupportedError
	if err := editcheck.Supported(guard, t.display, []byte(t.text.Join())); errors.As(err, &unsupported) {
		return engine.BadInputf("{edit_guard} %s cannot be checked here: %s; use span", guard, untrusted.Escape(unsupported.Reason))
	}
	return nil
}

// shapeReply checks a reply before anything is made of it: one for a Go declaration must be one
// declaration of its kind and name. One that is not says why (for the journal) and what to send
// instead (for the retry).
func (t *transform) shapeReply(format string, repl []string) (reason, retry string) {
	if format != "span" || !t.decl {
		return "", ""
	}
	var shape *editcheck.ShapeError
	if err := editcheck.DeclShape(strings.Join(t.origSpan, "\n"), strings.Join(repl, "\n")); errors.As(err, &shape) {
		return shape.Reason, shape.Retry
	}
	return "", ""
}

// guardEdit checks the file an edit makes against the edit guard, before it is written.
func (t *transform) guardEdit(s *packs.Settings, next []byte) (reason, retry string) {
	guard := s.String(packs.EditGuard)
	if guard == editcheck.GuardSpan {
		return "", ""
	}
	var outside *editcheck.GuardError
	if err := editcheck.CheckGuard(guard, t.display, t.guard.Original(), next); errors.As(err, &outside) {
		return outside.Reason, outside.Retry
	} else if err != nil {
		return err.Error(), "Your edit could not be checked: " + err.Error()
	}
	return "", ""
}

// insertReply is the span an insert-format reply makes: its lines above the span as it is.
func (t *transform) insertReply(lines []string) []string {
	return append(slices.Clone(lines), t.span()...)
}

// measure runs the verify against mutants of the kept span, where the operator's mutants setting
// asks for any, and records what it showed. The edit is kept whatever it shows; a verify that
// cannot be shown to fail on the span costs the host the diff's reading, counted in its work.
func (t *transform) measure(ctx context.Context, r *engine.Run, written []byte) (*strength.Result, error) {
	n := int(r.Spec.Settings.Int(packs.Mutants))
	if n == 0 {
		return nil, nil
	}
	var res strength.Result
	if t.commentsOnly(written) {
		// Mutants of the code around the edit would say nothing of it.
		res.CommentsOnly = true
		r.Emit(engine.CommentsOnlyEvent{Strength: res.String(), CommentsOnly: true})
	} else {
		var err error
		res, err = strength.Measure(ctx, r, strength.Options{Verify: t.opts.Verify, Root: t.opts.Root, Max: n,
			Spans: []strength.Span{{File: t.path, Text: written, Start: t.start, End: t.start + t.n - 1}}})
		if err != nil {
			return nil, err
		}
	}
	r.SetVerifyStrength(res.String())
	t.d.StrengthDetails = engine.StrengthDetails{VerifyStrength: res.String(), StrengthWords: res.Words("read the diff"), Survivors: res.Survivors}
	return &res, nil
}

// commentsOnly says the edit that wrote next changed a Go file's comments alone.
func (t *transform) commentsOnly(next []byte) bool {
	if scope.Language(t.display) != "Go" {
		return false
	}
	return editcheck.CheckGuard(editcheck.GuardComments, t.display, t.guard.Original(), next) == nil
}

// guardWords says, for a red run's reason, why no attempt got past the checks before the verify.
func guardWords(reason string) string {
	return fmt.Sprintf("no edit passed the checks before the verify (%s)", reason)
}
