package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// progressView is a run's progress on stderr while it runs: engine events, and a tick of its own
// clock once a second so that a stage that sends nothing (the server reading a long prompt, a
// slow verify) still shows time passing.
type progressView interface {
	engine.Observer
	// tick redraws or reprints what the last event said, with the clock now.
	tick()
	// clear takes a live line off the terminal before another line is written.
	clear()
}

// progressTick is how often a view's clock ticks.
const progressTick = time.Second

// stageOf tells stages apart: the same stage of another request or attempt is a new one.
type stageOf struct {
	stage   engine.Stage
	attempt int
}

// describe is what ev says a run is doing, without the clock.
func describe(ev engine.ProgressEvent) string {
	switch ev.Stage {
	case engine.StagePrefill:
		desc := fmt.Sprintf("request %d: the server reads the prompt", ev.Attempt)
		if ev.Total > 0 {
			desc += fmt.Sprintf(", %d of %s", ev.Done, client.Count(ev.Total, "token", "tokens"))
		}
		return desc
	case engine.StageDecode:
		desc := fmt.Sprintf("request %d: %s so far", ev.Attempt, client.Count(ev.Deltas, "token", "tokens"))
		if s := ev.Elapsed.Seconds(); s >= 0.25 {
			desc += fmt.Sprintf(", %.1f t/s", float64(ev.Deltas)/s)
		}
		return desc
	case engine.StageVerify:
		if ev.Step == engine.StepBaseline {
			return "baseline: the verify command runs on the tree before any edit"
		}
		if ev.What != "" {
			return ev.What + ": the verify command runs"
		}
		return fmt.Sprintf("attempt %d: the verify command runs", ev.Attempt)
	case engine.StageTurn:
		return ev.What
	case engine.StageMutants:
		return ev.MutantText()
	case engine.StageEmbed:
		return fmt.Sprintf("embedding: %d of %d entries sent", ev.Done, ev.Total)
	case engine.StageScore:
		return fmt.Sprintf("scoring the pairs of %s", client.Count(ev.Total, "entry", "entries"))
	}
	return ""
}

// clock is the time a run has taken, in whole seconds as a person reads it.
func clock(d time.Duration) string {
	return d.Truncate(time.Second).String()
}

// liveProgress shows a run's stages on a terminal, one line redrawn in place: what the run waits
// on, and while a reply streams the tokens so far and their rate, with the time the run has
// taken. It clears its line before the receipt prints.
type liveProgress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	now func() time.Time
	// start is when the run began; ev the last event, with seen whether there was one.
	start time.Time
	ev    engine.ProgressEvent
	seen  bool
	// stage and shown: a new stage always renders; within one, an event renders at most every
	// 100 ms.
	stage stageOf
	shown time.Time
}

func newLiveProgress(w io.Writer, now func() time.Time) *liveProgress {
	return &liveProgress{now: now, start: now(), bar: progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetSpinnerChangeInterval(0),
		// The description carries the run's clock, which the bar's own would repeat.
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionClearOnFinish(),
	)}
}

// Observe describes one stage of the run.
func (p *liveProgress) Observe(ev engine.ProgressEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	st := stageOf{ev.Stage, ev.Attempt}
	if p.seen && st == p.stage && now.Sub(p.shown) < 100*time.Millisecond {
		return
	}
	p.ev, p.seen, p.stage, p.shown = ev, true, st, now
	p.draw(now)
}

func (p *liveProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen {
		p.draw(p.now())
	}
}

func (p *liveProgress) draw(now time.Time) {
	p.bar.Describe(fmt.Sprintf("%s [%s]", describe(p.ev), clock(now.Sub(p.start))))
}

func (p *liveProgress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Clear()
}

// lineProgress is a run's progress where stderr is no terminal (a log, a pipe, a host's shell
// tool): nothing for a run's first seconds, then a line when the stage changes and otherwise at
// most one every lineEvery, so a long run is never silent and a short one prints none.
type lineProgress struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	now    func() time.Time
	start  time.Time
	ev     engine.ProgressEvent
	seen   bool
	// printed is when the last line was written (zero for none), and of which stage.
	printed time.Time
	stage   stageOf
}

const (
	// lineAfter is how long a run goes before its first line.
	lineAfter = 3 * time.Second
	// lineEvery is the most often a line is written within one stage.
	lineEvery = 10 * time.Second
)

func (p *lineProgress) Observe(ev engine.ProgressEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ev, p.seen = ev, true
	p.print(p.now())
}

func (p *lineProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.print(p.now())
}

func (p *lineProgress) print(now time.Time) {
	if !p.seen || now.Sub(p.start) < lineAfter {
		return
	}
	st := stageOf{p.ev.Stage, p.ev.Attempt}
	if !p.printed.IsZero() && st == p.stage && now.Sub(p.printed) < lineEvery {
		return
	}
	p.printed, p.stage = now, st
	fmt.Fprintf(p.w, "%s [%s]: %s\n", p.prefix, clock(now.Sub(p.start)), describe(p.ev))
}

func (p *lineProgress) clear() {}

// observer is the progress of a run on stderr, unless the caller asked for --json (whose stderr
// holds only the receipt): the live line on a terminal, else a line now and then. Its clock
// ticks until stopProgress.
func (e *env) observer(cmd *cli.Command) engine.Observer {
	if cmd.Bool("json") {
		return nil
	}
	now := e.now
	if now == nil {
		now = time.Now
	}
	var v progressView
	if e.stderrIsTerminal() {
		v = newLiveProgress(e.stderr, now)
	} else {
		v = &lineProgress{w: e.stderr, prefix: cmd.Name, now: now, start: now()}
	}
	e.startProgress(v)
	return v
}

// startProgress shows v and starts its clock: e.ticks in tests, else a ticker of progressTick.
func (e *env) startProgress(v progressView) {
	e.stopProgress()
	ticks, stopTicks := e.ticks, func() {}
	if ticks == nil {
		t := time.NewTicker(progressTick)
		ticks, stopTicks = t.C, t.Stop
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ticks:
				v.tick()
			case <-stop:
				return
			}
		}
	}()
	e.live = v
	e.stopTicks = func() {
		stopTicks()
		close(stop)
		<-done
	}
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

// stopProgress stops the progress clock and clears the line, if one is shown.
func (e *env) stopProgress() {
	if e.stopTicks != nil {
		e.stopTicks()
		e.stopTicks = nil
	}
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
