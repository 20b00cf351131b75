package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// liveProgress shows a run's stages on a terminal: what the run waits on, and while a reply
// streams the tokens so far and their rate. It renders only when an event arrives (no goroutine
// of its own), and clears its line before the receipt prints.
type liveProgress struct {
	bar *progressbar.ProgressBar
	// stage and shown: a new stage always renders; within one, a render at most every 100 ms.
	stage engine.Stage
	shown time.Time
	now   func() time.Time
}

func newLiveProgress(w io.Writer) *liveProgress {
	return &liveProgress{now: time.Now, bar: progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)}
}

// Observe describes one stage of the run.
func (p *liveProgress) Observe(ev engine.ProgressEvent) {
	now := p.now()
	if ev.Stage == p.stage && now.Sub(p.shown) < 100*time.Millisecond {
		return
	}
	p.stage, p.shown = ev.Stage, now
	switch ev.Stage {
	case engine.StagePrefill:
		p.bar.Describe(fmt.Sprintf("request %d: the server reads the prompt", ev.Attempt))
	case engine.StageDecode:
		desc := fmt.Sprintf("request %d: %s so far", ev.Attempt, client.Count(ev.Deltas, "token", "tokens"))
		if s := ev.Elapsed.Seconds(); s >= 0.25 {
			desc += fmt.Sprintf(", %.1f t/s", float64(ev.Deltas)/s)
		}
		p.bar.Describe(desc)
	case engine.StageVerify:
		p.bar.Describe(fmt.Sprintf("attempt %d: the verify command runs", ev.Attempt))
	case engine.StageMutants:
		p.bar.Describe(fmt.Sprintf("checking the verify: mutant %d of %d", ev.Done+1, ev.Total))
	case engine.StageEmbed:
		p.bar.Describe(fmt.Sprintf("embedding: %d of %d entries sent", ev.Done, ev.Total))
	case engine.StageScore:
		p.bar.Describe(fmt.Sprintf("scoring the pairs of %s", client.Count(ev.Total, "entry", "entries")))
	}
}

func (p *liveProgress) clear() { _ = p.bar.Clear() }

// observer is the live progress of a run when stderr is a terminal and the caller did not ask
// for --json; nil otherwise, so a log or a machine caller gets none.
func (e *env) observer(cmd *cli.Command) engine.Observer {
	if cmd.Bool("json") || !e.stderrIsTerminal() {
		return nil
	}
	e.live = newLiveProgress(e.stderr)
	return e.live
}

// logAboveProgress writes a run's own log lines (eval --ab's one line per turn) to stderr, clearing
// the live progress line first, so that a line never lands on the end of it; the next event
// draws the progress line again below.
type logAboveProgress struct{ e *env }

func (l logAboveProgress) Write(p []byte) (int, error) {
	if l.e.live != nil {
		l.e.live.clear()
	}
	return l.e.stderr.Write(p)
}

// stopProgress clears the progress line, if one is shown.
func (e *env) stopProgress() {
	if e.live != nil {
		e.live.clear()
		e.live = nil
	}
}

func (e *env) stderrIsTerminal() bool {
	if e.isTerminal != nil {
		return e.isTerminal(e.stderr)
	}
	return terminalFile(e.stderr) != nil
}

func (e *env) stdoutIsTerminal() bool {
	if e.isTerminal != nil {
		return e.isTerminal(e.stdout)
	}
	return terminalFile(e.stdout) != nil
}

// terminalFile is the terminal w writes to, seen through locum's own buffering; nil when w is not
// a terminal.
func terminalFile(w io.Writer) *os.File {
	var f *os.File
	switch x := w.(type) {
	case *os.File:
		f = x
	case *stderrAfterStdout:
		f = x.file
	case *bufferedFile:
		f = x.file
	}
	if f != nil && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}
