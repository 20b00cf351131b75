package engine

import "fmt"

import "time"

// Stage names what a run is doing when it reports progress.
type Stage string

// The stages a run reports.
const (
	StagePrefill Stage = "prefill" // a request is sent; the server reads the prompt
	StageDecode  Stage = "decode"  // the reply streams
	StageVerify  Stage = "verify"  // the verify command judges an edit
	StageEmbed   Stage = "embed"   // dedup sends a batch of entries to embed: Done of Total so far
	StageScore   Stage = "score"   // dedup scores the pairs of Total entries
	// StageMutants: the verify runs against a mutant of a kept span, Done of Total so far.
	StageMutants Stage = "mutants"
	// StageTurn: the agent's model answered turn Attempt and the tool calls it made run; What
	// names them.
	StageTurn Stage = "turn"
)

// ProgressEvent is one report of a run in progress.
type ProgressEvent struct {
	Stage Stage
	Step  string // the engine step that reports
	// Attempt is the transform's edit attempt at verify, the agent's turn at turn and verify;
	// at prefill and decode, the number of the request in flight.
	Attempt int
	// What, when set, is the mode's words for what the stage is about (the agent's "turn 3 of 30:
	// read_file a.go"), which a front end shows in place of the attempt's number. Text of the
	// model's is escaped in it.
	What string
	// Chars counts the answer and thinking characters streamed so far, and Deltas the stream
	// chunks that carried text: one per token on the servers locum knows, so "tokens so far".
	Chars, Deltas int
	Elapsed       time.Duration
	// Done and Total count a dedup's entries (embedded so far and in all, or scored), the
	// mutants run, or at prefill the prompt tokens the server says it has read (0 of 0 where it
	// does not say).
	Done, Total int
}

// Observer hears a run's progress while it runs, for a front end that shows it (the MCP server
// turns each event into a progress notification). It is called on the run's goroutine and must
// return quickly.
type Observer interface {
	Observe(ProgressEvent)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(ProgressEvent)

// Observe calls f.
func (f ObserverFunc) Observe(ev ProgressEvent) { f(ev) }

// Observe reports ev to the run's observer, if it has one.
func (r *Run) Observe(ev ProgressEvent) {
	if r.Spec.Observer == nil {
		return
	}
	if ev.Attempt == 0 {
		ev.Attempt = r.calls + 1
	}
	r.Spec.Observer.Observe(ev)
}

// StepBaseline is the Step of the verify run on the tree before any edit.
const StepBaseline = "baseline"

// MutantText words a StageMutants event: Done 0 is the control run (the verify on the kept span
// in the scratch copy), then the mutants, Total-1 of them.
func (ev ProgressEvent) MutantText() string {
	if ev.Done == 0 {
		return "checking the verify: it runs on the kept span in a scratch copy"
	}
	return fmt.Sprintf("checking the verify: mutant %d of %d", ev.Done, ev.Total-1)
}
