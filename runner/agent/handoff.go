package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// HandoffRule is how an agent's handoff chooses what it shows: the worktree as the run ended,
// which holds every file the tools wrote as they last wrote it.
const HandoffRule = "the worktree as the run ended: each file as the tools last wrote it"

// maxHandoffFile bounds a file an agent's handoff diffs: a larger one is named, not diffed.
const maxHandoffFile = 256 << 10

// handoff is a red agent run's handoff: what the tools wrote, as a diff against the base commit,
// and the last verify round's output, said to be of this tree only where nothing was written
// after it. It is made before the worktree is removed.
func (a *agent) handoff(ctx context.Context, _ string) *engine.HandoffDraft {
	d := &engine.HandoffDraft{Rule: HandoffRule, VerifyTail: a.d.VerifyTail}
	var paths []string
	if a.ws != nil {
		for p := range a.ws.wrote {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var diff strings.Builder
	for _, p := range paths[:min(len(paths), engine.MaxHandoffFiles)] {
		after := a.ws.wrote[p].data
		if len(after) > maxHandoffFile {
			diff.WriteString("diff of " + p + " left out: over 256 KiB\n")
			continue
		}
		// The base commit's bytes; a file the run created has none.
		before, err := gitsafe.Run(ctx, a.wt, "cat-file", "blob", a.base+":"+p)
		if err != nil {
			before = ""
		}
		diff.WriteString(engine.UnifiedDiff(p, before, string(after)))
		// The use is measured on the person's tree, which the run never touched.
		mine, err := untrusted.ReadFileIn(a.opts.Root, filepath.FromSlash(p), 1<<20)
		if errors.Is(err, fs.ErrNotExist) {
			mine = nil
		} else if err != nil {
			continue
		}
		d.Files = append(d.Files, engine.HandoffFileOf(p, mine, after))
	}
	if len(paths) > engine.MaxHandoffFiles {
		fmt.Fprintf(&diff, "[%d more files written: the run's journal has each write]\n", len(paths)-engine.MaxHandoffFiles)
	}
	d.Diff = diff.String()
	d.Verified = d.Diff != "" && len(a.rounds) > 0 && a.gated == a.writes
	switch {
	case d.Diff == "":
		d.NoDiff = "the model's tools changed no file"
		d.Next = "Do the task yourself; error.message says how the run ended."
	case a.opts.Keep:
		d.Next = "Your tree is untouched; the worktree is kept at details.worktree: start from this diff, fix what verify_tail shows, then run the verify yourself."
	default:
		d.Next = "Your tree is untouched and the branch is gone: start from this diff, fix what verify_tail shows, then run the verify yourself."
	}
	return d
}
