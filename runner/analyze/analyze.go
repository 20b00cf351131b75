// Package analyze reads run journals back into what a maintainer needs to decide whether to route
// more work to a local model: where a run first went wrong, where it ended, whether a later attempt
// recovered it, what its verify command did not see, and a health word with its reasons. It reads
// journals only; no mode imports it.
package analyze

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/ledger"
)

// The stages a run can fail at. A reply failure carries its class after a colon
// ("reply:truncated"), so the closed list stays short and the class stays visible.
const (
	StageNone            = "none"
	StageScope           = "scope"
	StageBudget          = "budget"
	StageConnect         = "connect"
	StageReply           = "reply"
	StageEditApply       = "edit_apply"
	StageVerifyRed       = "verify_red"
	StageVerifyNoVerdict = "verify_no_verdict"
	StageGate            = "gate"
	StageGuardrail       = "guardrail"
	// StageTurns is an agent that used its turns, or stalled, without finishing.
	StageTurns = "turns"
	// StageNoChange is a reply that left the span as it was, or an agent whose run changed no file.
	StageNoChange = "no_change"
	// StageItems is a workflow whose branch holds only some of its items: the others did not
	// end green, or did not apply on it.
	StageItems    = "items"
	StageRefused  = "refused"
	StageSignal   = "signal"
	StageRestore  = "restore"
	StageInternal = "internal"
	// StageUnfinished is a journal with no run_end: the process died or is still running.
	StageUnfinished = "unfinished"
)

// The health words.
const (
	Good    = "good"
	Warning = "warning"
	Risky   = "risky"
)

// Failure is one thing that went wrong during a run, in journal order.
type Failure struct {
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Run is the analysis of one journal. Strings come from the journal: untrusted, to be escaped
// before they reach a terminal.
type Run struct {
	ID             string    `json:"run"`
	JournalVersion int       `json:"journal_version"`
	Start          time.Time `json:"start"`
	Mode           string    `json:"mode"`
	Model          string    `json:"model"`
	Status         string    `json:"status"`
	Attempts       int       `json:"attempts"`
	Primary        string    `json:"primary_stage"`
	Final          string    `json:"final_stage"`
	Recovered      bool      `json:"recovered"`
	Failures       []Failure `json:"failures"`
	Gap            Gap       `json:"verification_gap"`
	Health         string    `json:"health"`
	Reasons        []string  `json:"reasons"`
	Figures        Figures   `json:"figures"`
	// Host is what the run saved or cost the host, as its journal's parts give it (estimated);
	// null for a journal that recorded none.
	Host *cost.Estimate `json:"host"`
	// Parent is the workflow run this run was an item of, "" for a call of its own; Items are a
	// workflow run's items as they ended, each with its own run.
	Parent string `json:"parent,omitempty"`
	Items  []Item `json:"items,omitempty"`
	// Unsealed says locum cannot show it wrote the journal (engine.Seal); Cut why not every
	// event of it was read.
	Unsealed bool   `json:"unsealed,omitempty"`
	Cut      string `json:"cut,omitempty"`
	// Shown is what a kept change's green verify showed by its baseline (fixed, held), and
	// VerifyStrength how many mutants of it the verify rejected (K/N, or ?); "" where unknown.
	Shown          string `json:"shown,omitempty"`
	VerifyStrength string `json:"verify_strength,omitempty"`
	// Handoff is what the run's red result handed the host, and what became of it; nil where
	// it handed none, or was a workflow's item (its workflow's result carried it).
	Handoff *Handoff `json:"handoff,omitempty"`
}

// Handoff is a red run's handoff as the analysis shows it: its bytes, its failure's kind, and
// whether the host used it (engine.HandoffUseRule).
type Handoff struct {
	Bytes   int64  `json:"bytes"`
	Failure string `json:"failure"`
	engine.HandoffUse
	rec *engine.HandoffRecord
}

// MeasureHandoff measures the use of the run's handoff, where no journal records it, on its files
// in root as they stand.
func (r *Run) MeasureHandoff(root string) {
	if h := r.Handoff; h != nil && h.rec != nil {
		h.HandoffUse = h.rec.Use(root)
	}
}

// Item is one item of a workflow run, as its item_end event says.
type Item struct {
	Step   string `json:"step"`
	Index  int    `json:"index"`
	Item   string `json:"item"`
	Status string `json:"status"`
	RunID  string `json:"run_id"`
	Commit string `json:"commit"`
}

// Figures are the run's measured numbers, summed over its replies; nil where the server did not
// report them.
type Figures struct {
	InTokens  *int64   `json:"in_tokens"`
	OutTokens *int64   `json:"out_tokens"`
	TTFTms    *int64   `json:"ttft_ms"`
	Rate      *float64 `json:"rate"`
}

// state is what a pass over the events gathers.
type state struct {
	run        Run
	ended      bool
	errKind    string
	failedStep string
	attempt    int
	edited     []string
	wrote      bool
	verify     string
	verifySeen bool
	lastTail   string
	notes      []string
	in, out    int64
	inOK       bool
	outOK      bool
	replies    int
	requests   int
	// stepRequests counts the requests of a transform's edit or a digest: its attempts so far.
	stepRequests int
	// receiptAttempts is the figure the run's own receipt printed, which a mode may count its way;
	// hasReceiptAttempts says the receipt printed one, 0 included (a run refused before any request).
	receiptAttempts    int
	hasReceiptAttempts bool
	decodeMs           int64
	decodeOut          int64
	// handoff is the run's handoff, once its event was read.
	handoff *engine.HandoffRecord
}

// Analyze reads the events of one run. It never fails: what a journal lacks is left unknown.
func Analyze(id string, events []map[string]any) Run {
	st := &state{run: Run{ID: id, Status: "", Failures: []Failure{}, Reasons: []string{}}, inOK: true, outOK: true}
	for _, ev := range events {
		st.observe(ev)
	}
	st.finish()
	return st.run
}

// NotJournalError is a file with no run_start event: whatever it is, it is not a run.
type NotJournalError struct{ Path string }

func (e *NotJournalError) Error() string { return e.Path + ": not a run journal (no run_start event)" }

// AnalyzeFile reads and analyses the journal at path, checking its seal under key.
func AnalyzeFile(path string, key []byte) (Run, error) {
	j, err := engine.LoadJournal(path, key, nil)
	if err != nil {
		return Run{}, err
	}
	if !slices.ContainsFunc(j.Events, func(ev map[string]any) bool { return engine.EventKind(ev) == "run_start" }) {
		return Run{}, &NotJournalError{Path: path}
	}
	return AnalyzeJournal(strings.TrimSuffix(filepath.Base(path), ".jsonl"), j), nil
}

// AnalyzeJournal is Analyze of a journal read back, marked where it is not sealed or was cut.
func AnalyzeJournal(id string, j engine.RunJournal) Run {
	r := Analyze(id, j.Events)
	r.Unsealed, r.Cut = !j.Sealed, j.Cut
	return r
}

// observe reads one event. Every mode's events go through this one switch: a mode that journals a
// new kind of trouble adds a case here.
func (st *state) observe(ev map[string]any) {
	switch engine.EventKind(ev) {
	case "run_start":
		e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
		st.run.JournalVersion = e.JournalVersion
		st.run.Mode, st.run.Model = e.Mode, e.Model
		st.run.Start = engine.EventTime(ev)
		if e.Parent != nil {
			st.run.Parent = e.Parent.Run
		}
	case "item_end":
		e, _ := engine.DecodeEvent[engine.ItemEndEvent](ev)
		st.run.Items = append(st.run.Items, Item{Step: e.Step, Index: e.Index, Item: e.Item,
			Status: e.Status, RunID: deref(e.RunID), Commit: deref(e.Commit)})
	case "combine":
		// A green item whose change did not apply on the branch ends a conflict.
		if e, _ := engine.DecodeEvent[engine.CombineEvent](ev); e.Conflict {
			for i := range st.run.Items {
				if it := &st.run.Items[i]; it.Step == e.Step && it.Index == e.Index {
					it.Status = "CONFLICT"
				}
			}
		}
	case "scope":
		// A file mode's scope and an agent's both name the verify.
		e, _ := engine.DecodeEvent[engine.FileScopeEvent](ev)
		if m, ok := engine.LookupMode(st.run.Mode); ok && m.EditsInPlace && e.File != "" {
			st.edited = []string{e.File}
		}
		if e.Verify != nil {
			st.verify, st.verifySeen = *e.Verify, true
		}
	case "request":
		st.requests++
		// A reply belongs to the attempt its request opened: a reply that fails before the
		// attempt event (cut off, malformed) is that attempt's, not the one before.
		if e, _ := engine.DecodeEvent[engine.RequestEvent](ev); e.Step == "edit" || e.Step == "digest" {
			st.stepRequests++
			st.attempt = st.stepRequests
		}
	case "reply":
		st.reply(ev)
	case "attempt":
		e, _ := engine.DecodeEvent[engine.AttemptEvent](ev)
		st.attempt = e.Attempt
		switch {
		case e.EditError != "":
			st.fail(StageEditApply, e.EditError)
		case e.Wrote():
			st.wrote = true
		}
	case "verify":
		st.verdict(ev)
	case "digest_unusable":
		e, _ := engine.DecodeEvent[engine.DigestUnusableEvent](ev)
		st.attempt = e.Attempt
		st.fail(StageReply+":malformed", e.Error)
	case "response_format_refused":
		// The digest is asked again without the schema: the same attempt.
		st.stepRequests--
		st.note("schema_refused")
	case "gate":
		e, _ := engine.DecodeEvent[engine.GateEvent](ev)
		if e.Supported == 0 {
			st.fail(StageGate, "no claim backed by the file")
		} else if e.Unsupported > 0 {
			st.note("unsupported_claims")
		}
	case "guardrail_block":
		// The agent's transcript: a refusal returned to the model as a tool result.
		e, _ := engine.DecodeEvent[engine.GuardrailBlockEvent](ev)
		st.fail(StageGuardrail, orDefault(e.Guardrail, orDefault(e.Rule, e.Reason)))
	case "nudge":
		e, _ := engine.DecodeEvent[engine.NudgeEvent](ev)
		st.fail(StageReply+":"+orDefault(e.Class, orDefault(e.Reason, "nudged")), "")
	case "step_failed":
		e, _ := engine.DecodeEvent[engine.StepFailedEvent](ev)
		st.failedStep = e.Step
	case "guard_failed":
		e, _ := engine.DecodeEvent[engine.GuardFailedEvent](ev)
		st.fail(StageRestore, e.Error)
	case "run_end":
		st.runEnd(ev)
	case "handoff":
		e, _ := engine.DecodeEvent[engine.HandoffEvent](ev)
		if e.Handoff != nil {
			st.handoff = &engine.HandoffRecord{Bytes: int64(max(e.Handoff.Bytes, 0)), Failure: e.Handoff.Failure, Files: engine.BoundHandoffFiles(e.Files)}
		}
	case "handoff_use":
		if e, _ := engine.DecodeEvent[engine.HandoffUseEvent](ev); st.handoff != nil {
			st.handoff.AddUse(e)
		}
	}
}

// endDetails are what a run's end says of its change, whatever its mode: an agent's details
// name the files it changed, what its green verify showed (as a transform's do) and, as every
// mode that measured its verify, its strength.
type endDetails struct {
	engine.AgentDetails
	engine.StrengthDetails
}

func (st *state) runEnd(ev map[string]any) {
	e, _ := engine.DecodeEvent[engine.RunEndEvent](ev)
	st.ended = true
	st.run.Status = string(e.Status)
	// The end says which model ran: none (null) for a lexical dedup that started with an
	// embedding model configured. A journal from before run_end named it leaves the start's.
	if _, named := ev["model"]; named {
		st.run.Model = deref(e.Model)
	}
	if e.Error != nil {
		st.errKind = e.Error.Kind
	}
	if d := engine.DecodeDetails[*endDetails](e.Details); d != nil {
		st.run.Shown = d.Shown
		st.run.VerifyStrength = d.VerifyStrength
		// The agent's result names every file it changed.
		if d.FilesChanged != nil {
			st.edited = st.edited[:0]
			for _, name := range d.FilesChanged {
				if name != "" {
					st.edited = append(st.edited, name)
				}
			}
			st.wrote = len(st.edited) > 0
		}
	}
	// The host estimate is read as the ledger reads it: its parts, each once, never its sums.
	if h, ok := ev["host"].(map[string]any); ok {
		if est, ok := ledger.Recorded(h); ok {
			st.run.Host = &est
		}
	}
	if m := receiptAttempts.FindStringSubmatch(e.Receipt); m != nil {
		st.receiptAttempts, _ = strconv.Atoi(m[1])
		st.hasReceiptAttempts = true
	}
}

func (st *state) reply(ev map[string]any) {
	// A request the engine never sent (a failed probe, a prompt over the context) and a request
	// that got no reply have no figures; run_end says where they left the run.
	if failed, _ := engine.DecodeEvent[engine.ReplyFailedEvent](ev); failed.Sent != nil && !*failed.Sent {
		return
	}
	e, _ := engine.DecodeEvent[engine.ReplyEvent](ev)
	if e.Class == "" && e.Error != nil {
		return
	}
	st.replies++
	if e.InTokens != nil {
		st.in += *e.InTokens
	} else {
		st.inOK = false
	}
	if e.OutTokens != nil {
		st.out += *e.OutTokens
		if e.TTFTms != nil {
			if st.run.Figures.TTFTms == nil {
				st.run.Figures.TTFTms = new(*e.TTFTms)
			}
			if e.ElapsedMs > *e.TTFTms {
				st.decodeMs += e.ElapsedMs - *e.TTFTms
				st.decodeOut += *e.OutTokens
			}
		}
	} else {
		st.outOK = false
	}
	if e.Class != "" && e.Class != "answer" {
		st.fail(StageReply+":"+e.Class, deref(e.Error))
	}
}

func (st *state) verdict(ev map[string]any) {
	e, _ := engine.DecodeEvent[engine.VerifyEvent](ev)
	v := e.Verdict
	if v == "" && e.ExitCode != nil {
		v = "exit " + itoa(int64(*e.ExitCode))
	}
	st.lastTail = e.Tail
	switch v {
	case "exit 0", "stopped":
		// A verify stopped by a signal is the signal's failure, which run_end names.
	case "exit 1":
		st.fail(StageVerifyRed, "")
	default:
		st.fail(StageVerifyNoVerdict, v)
	}
}

// maxDetail bounds the journal text a failure carries: enough to recognise it.
const maxDetail = 200

func (st *state) fail(stage, detail string) {
	if len(detail) > maxDetail {
		detail = strings.ToValidUTF8(detail[:maxDetail], "") + "..."
	}
	st.run.Failures = append(st.run.Failures, Failure{Stage: stage, Attempt: st.attempt, Detail: detail})
}

func (st *state) note(reason string) {
	for _, n := range st.notes {
		if n == reason {
			return
		}
	}
	st.notes = append(st.notes, reason)
}

func (st *state) finish() {
	r := &st.run
	r.Attempts = st.receiptAttempts
	if !st.hasReceiptAttempts {
		r.Attempts = max(st.attempt, st.requests)
	}
	if st.replies > 0 {
		if st.inOK {
			r.Figures.InTokens = &st.in
		}
		if st.outOK {
			r.Figures.OutTokens = &st.out
		}
		if st.decodeMs > 0 {
			rate := float64(st.decodeOut) / (float64(st.decodeMs) / 1000)
			r.Figures.Rate = &rate
		}
	}
	switch {
	case !st.ended:
		r.Status = StageUnfinished
		r.Final = StageUnfinished
	case r.Status == "OK":
		r.Final = StageNone
	default:
		r.Final = st.finalStage()
	}
	if r.Final != StageNone {
		if n := len(r.Failures); n == 0 || r.Failures[n-1].Stage != r.Final {
			r.Failures = append(r.Failures, Failure{Stage: r.Final, Attempt: st.attempt})
		}
	}
	r.Primary = StageNone
	if len(r.Failures) > 0 {
		r.Primary = r.Failures[0].Stage
	}
	r.Recovered = r.Status == "OK" && len(r.Failures) > 0
	if h := st.handoff; h != nil && r.Parent == "" {
		r.Handoff = &Handoff{Bytes: h.Bytes, Failure: h.Failure, HandoffUse: h.Use(""), rec: h}
	}
	r.Gap = st.gap()
	r.Health, r.Reasons = st.health()
}

// finalStage is where a run that did not pass ended: the error kind run_end names, read with the
// step that failed; a journal too old to name the kind falls back to the step.
func (st *state) finalStage() string {
	last := ""
	if n := len(st.run.Failures); n > 0 {
		last = st.run.Failures[n-1].Stage
	}
	switch k := st.errKind; {
	case k == "red":
		if last != "" {
			return last
		}
		return StageVerifyRed
	case k == "input_budget", k == "context_window", k == "context_exhausted":
		return StageBudget
	case k == "max_turns", k == "stalled":
		return StageTurns
	case k == "unchanged", k == "no_change":
		return StageNoChange
	case k == "partial":
		return StageItems
	case k == "repeated":
		return StageVerifyRed
	case k == "off_loopback", k == "no_server", k == "redirect", k == "loading":
		return StageConnect
	case k == "refused", k == "no_tools":
		return StageRefused
	case k == "signal":
		return StageSignal
	case k == "verify_no_verdict", k == "verify_wrote", k == "verify_planted_git":
		return StageVerifyNoVerdict
	case k == "restore_failed":
		return StageRestore
	case strings.HasPrefix(k, "reply_"):
		return StageReply + ":" + strings.TrimPrefix(k, "reply_")
	case k == "http", k == "timeout", k == "too_large", k == "malformed", k == "input_truncated":
		return StageReply + ":" + k
	case k == "bad_input":
		if st.failedStep == "connect" {
			return StageConnect
		}
		return StageScope
	case k == "":
		// A journal that does not name the error kind: the step that failed says what it can.
		switch st.failedStep {
		case "scope", "entries":
			return StageScope
		case "connect":
			return StageConnect
		}
		if last != "" {
			return last
		}
	}
	return StageInternal
}

func (st *state) health() (string, []string) {
	r := &st.run
	reasons := []string{}
	word := Good
	raise := func(w, reason string) {
		reasons = append(reasons, reason)
		if w == Risky || word == Good {
			word = w
		}
	}
	switch {
	case r.Status == StageUnfinished:
		raise(Risky, "unfinished")
	case r.Final == StageRestore:
		raise(Risky, "restore_failed")
	case r.Status != "OK":
		raise(Warning, "failed:"+r.Final)
	}
	if r.Recovered {
		raise(Warning, "recovered_after:"+r.Primary)
	}
	if r.Status == "OK" {
		switch r.Gap.State {
		case GapFound:
			raise(Risky, "verification_gap")
		case GapUnknown:
			raise(Warning, "verification_unknown")
		}
	}
	if r.Status == "OK" {
		// A kept change is shown right only by a verify shown able to fail on it: one that
		// passed every mutant of it, or was green before the change too, leaves the diff to
		// be read.
		k, n, measured := strings.Cut(r.VerifyStrength, "/")
		switch {
		case r.VerifyStrength == "?" || measured && (k == "0" || n == "0"):
			raise(Warning, "verify_blind")
		case r.Shown == engine.ShownHeld && !(measured && k == n):
			raise(Warning, "held_unproven")
		}
	}
	for _, n := range st.notes {
		raise(Warning, n)
	}
	if r.JournalVersion > engine.JournalVersion {
		raise(Warning, "journal_newer_than_locum")
	}
	return word, reasons
}

var receiptAttempts = regexp.MustCompile(` attempts=([0-9]{1,6}) `)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// deref is a text a journal may leave null, "" where it does.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
