package workflow

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/strength"
	"github.com/locumdev/locum/untrusted"
)

// maxMeasuredFile bounds what is read of a file the branch changed, to make its mutants.
const maxMeasuredFile = 1 << 20

// measureFinal runs the final verify against mutants of the kept edits as the branch holds them:
// the lines each hunk of its diff from the base adds, where the operator's mutants setting asks
// for any. Only the context's end is an error.
func (w *run) measureFinal(ctx context.Context, r *engine.Run, command string) error {
	n := int(r.Spec.Settings.Int(packs.Mutants))
	if n == 0 {
		return nil
	}
	var res strength.Result
	diff, err := gitsafe.Run(ctx, w.combine, "diff", "--unified=0", "--no-renames", "--no-color", "--no-ext-diff", w.base, "HEAD")
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		res.Unknown = "the branch's diff could not be read: " + untrusted.Escape(err.Error())
	} else {
		var spans []strength.Span
		for _, h := range addedHunks(diff) {
			text, err := untrusted.ReadFileIn(w.combine, h.file, maxMeasuredFile)
			if err != nil {
				continue
			}
			spans = append(spans, strength.Span{File: filepath.Join(w.combine, h.file), Text: text, Start: h.start, End: h.start + h.lines - 1})
		}
		if res, err = strength.Measure(ctx, r, strength.Options{Verify: command, Root: w.combine, Spans: spans, Max: n}); err != nil {
			return err
		}
	}
	r.SetVerifyStrength(res.String())
	w.d.StrengthDetails = engine.StrengthDetails{VerifyStrength: res.String(), StrengthWords: res.WordsFor("the kept edits", "read the branch's diff")}
	return nil
}

// hunk is the lines one hunk of a diff adds to a file: lines of them from start (1-based).
type hunk struct {
	file         string
	start, lines int
}

// addedHunks reads the hunks of a unified diff with no context (git diff -U0) for the lines each
// adds, in each file the diff leaves: "+++ b/PATH" names it, "@@ -a,b +c,d @@" the lines. A
// hunk's own lines are counted off by its header, so a changed line that reads like a header is
// not taken for one. A quoted or deleted path is passed over.
func addedHunks(diff string) []hunk {
	var out []hunk
	file := ""
	body := 0 // the lines of the current hunk still to come
	for line := range strings.SplitSeq(diff, "\n") {
		if body > 0 {
			if !strings.HasPrefix(line, "\\") {
				body--
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "+++ "):
			file = ""
			if p, ok := strings.CutPrefix(line, "+++ b/"); ok && filepath.IsLocal(p) {
				file = p
			}
		case strings.HasPrefix(line, "@@ "):
			fields := strings.Fields(line)
			if len(fields) < 3 || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
				continue
			}
			_, removed := rangeOf(fields[1][1:])
			start, added := rangeOf(fields[2][1:])
			if removed < 0 || added < 0 {
				continue
			}
			body = removed + added
			if file != "" && start > 0 && added > 0 {
				out = append(out, hunk{file: file, start: start, lines: added})
			}
		}
	}
	return out
}

// rangeOf reads a hunk header's "START,COUNT" (COUNT 1 where it is left out); a count of -1 for
// one that is not a range.
func rangeOf(s string) (start, count int) {
	startText, countText, found := strings.Cut(s, ",")
	start, err := strconv.Atoi(startText)
	if err != nil || start < 0 {
		return 0, -1
	}
	count = 1
	if found {
		if count, err = strconv.Atoi(countText); err != nil || count < 0 || count > 1<<24 {
			return 0, -1
		}
	}
	return start, count
}
