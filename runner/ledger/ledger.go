// Package ledger reads run journals back into what delegation saved or cost the host: per run the
// host-cost estimate the run recorded (runner/cost), summed by model, mode, role or week, and the
// break-even each mode and role is at, from this machine's history or a documented prior. It
// reads journals only, as runner/analyze does; no mode imports it. Journals are the repository's
// files: what they say is counted, never obeyed, and a figure they hold is re-derived from its
// byte counts rather than taken as given.
package ledger

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// Entry is one run as the ledger counts it. Strings come from the journal: untrusted, to be
// escaped before they reach a terminal.
type Entry struct {
	Run    string    `json:"run"`
	Start  time.Time `json:"start"`
	Mode   string    `json:"mode"`
	Model  string    `json:"model"`
	Role   string    `json:"role"`
	Status string    `json:"status"`
	// Kind is the error's kind (red, unchanged, refused, does_not_pay...); "" for OK.
	Kind string `json:"kind"`
	// Verdict is the person's later word on the work: accepted or rejected (runs accept,
	// runs reject); "" where none was given.
	Verdict string `json:"verdict"`
	// SpanLines is the span's length in lines, where the run says (transform, summarize).
	SpanLines int `json:"span_lines"`
	// LocalMs is the run's wall time on this machine.
	LocalMs int64 `json:"local_ms"`
	// Asked counts the requests the run sent the model: 0 for a run stopped before any (no
	// server, a refusal for the budget or the context), which says nothing of the model.
	Asked int `json:"asked"`
	// Parts, TurnsLeft and Context are what the run measured of the host's side and the turns
	// and context the host said it had (0 where it said nothing); Costed says it recorded them
	// (a journal from before the estimate did not).
	Parts     cost.Parts `json:"parts"`
	TurnsLeft int64      `json:"turns_left"`
	Context   int64      `json:"context_tokens,omitempty"`
	// ContextSource says where Context came from: "call" (the call said it), "transcript"
	// (the host's usage log measured it around the call).
	ContextSource string `json:"context_source,omitempty"`
	Costed        bool   `json:"costed"`
	// Parent is the workflow run the run was an item of; "" for a call of its own.
	Parent string `json:"parent,omitempty"`
	// Strength is how many mutants of a kept change its verify rejected, K/N, or ? where none
	// could be run; "" where none were asked for.
	Strength string `json:"verify_strength,omitempty"`
	// Handoff is what the run's red result handed the host and what became of it; nil where it
	// handed none, or was a workflow's item (its workflow's result carried its handoff).
	Handoff *EntryHandoff `json:"handoff,omitempty"`
}

// EntryHandoff is a red run's handoff as the ledger counts it: its bytes, which the host read,
// and whether the host used it (engine.HandoffUseRule).
type EntryHandoff struct {
	Bytes   int64  `json:"bytes"`
	Failure string `json:"failure"`
	engine.HandoffUse
	rec *engine.HandoffRecord
}

// Shown says the run's change was kept by a verify that rejected every mutant of it run.
func (e Entry) Shown() bool {
	k, n, ok := strings.Cut(e.Strength, "/")
	return e.Kept() && ok && k == n && n != "0"
}

// Blind says the run's change was kept by a verify not shown able to fail on it: it passed
// every mutant, none could be made, or none could be run.
func (e Entry) Blind() bool {
	k, n, ok := strings.Cut(e.Strength, "/")
	return e.Kept() && e.Strength != "" && (!ok || k == "0" || n == "0")
}

// Kept says the run's work was shown done.
func (e Entry) Kept() bool { return e.Status == string(engine.StatusOK) }

// UsageError says the run was refused for its input before any work: a file that does not
// exist, a range past the end, a symbol not found. It measured nothing of the mode or the
// model, so it is counted apart from the runs.
func (e Entry) UsageError() bool { return e.Kind == engine.KindBadInput && e.Asked == 0 }

// Ended says the run has a result: a journal without run_end is a run still going, or one that
// died; it is not counted.
func (e Entry) Ended() bool { return e.Status != "" }

// Estimate is the run's host cost at the given prices and bytes per token, over the turns the
// run recorded.
func (e Entry) Estimate(p cost.Params) cost.Estimate {
	p.TurnsLeft = e.TurnsLeft
	if e.Context > 0 {
		p.Context, p.ContextSource = e.Context, cmp.Or(e.ContextSource, "call")
	}
	parts := e.Parts
	if e.Verdict == "rejected" {
		// A person found the work wrong: the job is still the host's to do.
		parts.Done = false
	}
	return cost.Of(parts, p)
}

// Judged is the run's estimate weighed by right, the rate at which a person found its role's
// kept work right, where one is known: a kept run nobody judged saved the host its job only as
// often as such work is right, and otherwise left it to do. A run a person judged, or any
// other, is its own estimate.
func (e Entry) Judged(p cost.Params, right *float64) cost.Estimate {
	est := e.Estimate(p)
	if right == nil || !e.Kept() || e.Verdict != "" || !e.Parts.Done {
		return est
	}
	wrong := e
	wrong.Parts.Done = false
	miss := wrong.Estimate(p)
	r := min(max(*right, 0), 1)
	mix := func(a, b int64) int64 { return int64(math.Round(r*float64(a) + (1-r)*float64(b))) }
	est.Saved = cost.Side{In: mix(est.Saved.In, miss.Saved.In), Out: mix(est.Saved.Out, miss.Saved.Out)}
	est.Carried = mix(est.Carried, miss.Carried)
	est.TurnsSaved = mix(est.TurnsSaved, miss.TurnsSaved)
	est.TurnTokens = mix(est.TurnTokens, miss.TurnTokens)
	est.Net = mix(est.Net, miss.Net)
	est.USDTurns = cost.Dollars(r*est.USDTurns + (1-r)*miss.USDTurns)
	est.USDBytes = cost.Dollars(r*est.USDBytes + (1-r)*miss.USDBytes)
	est.USD = cost.Dollars(r*est.USD + (1-r)*miss.USD)
	return est
}

// Filter picks the entries a ledger counts.
type Filter struct {
	Since time.Time
	Mode  string
	// Match, when set, keeps only the entries it accepts; Limit, when above 0, stops reading
	// once that many were kept, newest first.
	Match func(Entry) bool
	Limit int
	// Journals, when above 0, reads at most that many of the newest journals that count.
	Journals int
	// Root is the repository the journals are of: a handoff whose use no journal records is
	// measured on its files there as they stand. "" measures none: its use is unknown.
	Root string
}

const (
	// maxJournals bounds how many journals are read, newest first by name (a run's ID starts with
	// its start time): a repository may bring a folder of them along.
	maxJournals = 10000
	// maxJournalBytes bounds one journal the ledger reads: a run's journal is kilobytes, an
	// agent's long conversation a few megabytes; a larger file is not a run's and is skipped.
	maxJournalBytes = 16 << 20
)

// Left is what a reading of journals left out of its figures, and why.
type Left struct {
	// Unsealed counts the journals no seal of the operator's holds over: a figure that decides
	// or advises comes only from journals locum can show it wrote, and a repository can bring
	// any journal along. Those from before journals were sealed, changed since, copied under
	// another name, or of a run that has not ended are here.
	Unsealed int `json:"unsealed"`
	// Unreadable counts the files named like a journal that are not a readable run's journal.
	Unreadable int `json:"unreadable"`
	// Measurements counts the runs of a mode that measures models (engine.Mode.Measures): work
	// no host would have done, so no delegation's saving or keep rate.
	Measurements int `json:"measurements"`
}

// Words says in one line what was left out of the figures; "" where nothing was.
func (l Left) Words() string {
	var parts []string
	if l.Unsealed > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not counted: locum cannot show it wrote %s (no seal of yours holds: from before journals were sealed, changed, copied, or unfinished)",
			l.Unsealed, plural(l.Unsealed, "journal", "journals"), plural(l.Unsealed, "it", "them")))
	}
	if l.Unreadable > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not a readable run journal", l.Unreadable, plural(l.Unreadable, "file is", "files are")))
	}
	if l.Measurements > 0 {
		parts = append(parts, fmt.Sprintf("%d %s not counted: %s models, which no host would have done itself", l.Measurements,
			plural(l.Measurements, "bench run", "bench runs"), plural(l.Measurements, "it measures", "they measure")))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Read reads the entries of the journals in dir, oldest first. Only a journal sealed under key
// is counted (nil: none is); left says how many were not, and why.
func Read(dir string, key []byte, f Filter) (entries []Entry, left Left, err error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Left{}, nil
	}
	if err != nil {
		return nil, Left{}, err
	}
	var names []string
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".jsonl") && de.Type().IsRegular() {
			names = append(names, de.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	if len(names) > maxJournals {
		names = names[:maxJournals]
	}
	// The newest journals that count are read: a folder of unsealed ones named later than the
	// rest cannot crowd them out, within the maxJournals files read at most.
	seen := map[string]bool{}
	for _, name := range names {
		if f.Journals > 0 && len(seen) >= f.Journals {
			break
		}
		e, seal, ok, err := readEntry(filepath.Join(dir, name), key)
		switch {
		case err != nil || !ok:
			left.Unreadable++
			continue
		case !seal.Sealed:
			left.Unsealed++
			continue
		case seen[seal.Run]:
			// A run is counted once. Two sealed files of one run do not arise from locum's
			// writes: the seal binds each file's name.
			continue
		}
		seen[seal.Run] = true
		if !e.Ended() || (!f.Since.IsZero() && e.Start.Before(f.Since)) || (f.Mode != "" && e.Mode != f.Mode) {
			continue
		}
		if m, ok := engine.LookupMode(e.Mode); ok && m.Measures {
			left.Measurements++
			continue
		}
		if f.Match != nil && !f.Match(e) {
			continue
		}
		if h := e.Handoff; h != nil {
			h.HandoffUse = h.rec.Use(f.Root)
		}
		entries = append(entries, e)
		if f.Limit > 0 && len(entries) >= f.Limit {
			break
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		if !entries[i].Start.Equal(entries[j].Start) {
			return entries[i].Start.Before(entries[j].Start)
		}
		return entries[i].Run < entries[j].Run
	})
	return entries, left, nil
}

// The events the ledger reads; every other line is passed over without being decoded.
var ledgerEvents = [][]byte{[]byte(`"run_start"`), []byte(`"run_end"`), []byte(`"verdict"`), []byte(`"reply"`), []byte(`"handoff`)}

// readEntry reads one journal's entry and its seal under key: a regular file under
// maxJournalBytes, read once, streaming, decoding only what the ledger reads of the lines of the
// events it counts, and keeping none of them.
func readEntry(path string, key []byte) (Entry, engine.Seal, bool, error) {
	if st, err := os.Lstat(path); err != nil || st.Size() > maxJournalBytes {
		return Entry{}, engine.Seal{}, false, fmt.Errorf("%s: missing or over %d bytes: not a run's journal", path, maxJournalBytes)
	}
	b := entryOf(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	l := new(journalLine)
	seal, cut, err := engine.StreamJournal(path, key, func(line []byte) {
		if slices.ContainsFunc(ledgerEvents, func(ev []byte) bool { return bytes.Contains(line, ev) }) {
			b.observe(line, l)
		}
	})
	if err != nil || cut {
		return Entry{}, engine.Seal{}, false, err
	}
	if seal.Sealed {
		b.e.Run = seal.Run
	}
	return b.entry(), seal, b.started, nil
}

// FromEvents reads one run's entry from its journal's events; false when they hold no run_start.
// Each event is read as its line would be.
func FromEvents(id string, events []map[string]any) (Entry, bool) {
	b := entryOf(id)
	l := new(journalLine)
	for _, ev := range events {
		if line, err := json.Marshal(ev); err == nil {
			b.observe(line, l)
		}
	}
	e := b.entry()
	if h := e.Handoff; h != nil {
		h.HandoffUse = h.rec.Use("")
	}
	return e, b.started
}

// entryBuilder is an entry read one event at a time.
type entryBuilder struct {
	e       Entry
	started bool
	// handoff is the run's handoff, once its event was read.
	handoff *engine.HandoffRecord
}

// entry is the entry read, with its handoff where it is a run of its own.
func (b *entryBuilder) entry() Entry {
	e := b.e
	if b.handoff != nil && e.Parent == "" {
		e.Handoff = &EntryHandoff{Bytes: b.handoff.Bytes, Failure: b.handoff.Failure, rec: b.handoff}
	}
	return e
}

func entryOf(id string) *entryBuilder { return &entryBuilder{e: Entry{Run: id}} }

type (
	text   = untrusted.Once[string]
	number = untrusted.Once[float64]
)

// maxSettings is how many of a run_start's settings are looked at for its role: locum records
// each setting of its mode once, about forty.
const maxSettings = 256

// journalLine is what the ledger reads of one line of a journal: the fields of the events it
// counts, each once (untrusted.Once). Every other value is passed over without being built, so a
// line of any size and shape costs the fields it gives and no more.
type journalLine struct {
	Event  text `json:"event"`
	TS     text `json:"ts"`
	Mode   text `json:"mode"`
	Model  text `json:"model"`
	Parent untrusted.Once[struct {
		Run text `json:"run"`
	}] `json:"parent"`
	Settings untrusted.Once[[maxSettings]untrusted.Once[struct {
		Key   text `json:"key"`
		Value text `json:"value"`
	}]] `json:"settings"`
	Sent   untrusted.Once[bool] `json:"sent"`
	Status text                 `json:"status"`
	Error  untrusted.Once[struct {
		Kind text `json:"kind"`
	}] `json:"error"`
	// Details are the keys of engine.SpanDetails and engine.StrengthDetails the ledger counts, each
	// read once (TestLedgerReadsTheDetailsTheModesWrite holds the names to theirs).
	Details untrusted.Once[struct {
		Lines          text `json:"lines"`
		VerifyStrength text `json:"verify_strength"`
	}] `json:"details"`
	WallMs  number                     `json:"wall_ms"`
	Host    untrusted.Once[hostRecord] `json:"host"`
	Verdict text                       `json:"verdict"`
	// Handoff and Files are a handoff event's; Use to Why a handoff_use event's.
	Handoff untrusted.Once[struct {
		Bytes   number `json:"bytes"`
		Failure text   `json:"failure"`
	}] `json:"handoff"`
	Files untrusted.Once[[engine.MaxHandoffFiles]untrusted.Once[struct {
		File   text                                                         `json:"file"`
		SHA256 text                                                         `json:"sha256"`
		Added  untrusted.Once[[engine.MaxAddedLines]untrusted.Once[string]] `json:"added"`
	}]] `json:"files"`
	Use     text   `json:"use"`
	Source  text   `json:"source"`
	Present number `json:"present"`
	Of      number `json:"of"`
	By      text   `json:"by"`
	Why     text   `json:"why"`
}

// hostRecord is what the ledger reads of a run_end's host estimate: its counts and the
// parameters it was made at, never the figures derived from them.
type hostRecord struct {
	Parts untrusted.Once[struct {
		Read    number               `json:"read_bytes"`
		Write   number               `json:"write_bytes"`
		Call    number               `json:"call_bytes"`
		Result  number               `json:"result_bytes"`
		Review  number               `json:"review_bytes"`
		Handoff number               `json:"handoff_bytes"`
		Done    untrusted.Once[bool] `json:"done"`
		Turns   untrusted.Once[struct {
			Direct    number `json:"direct"`
			Delegated number `json:"delegated"`
		}] `json:"turns"`
	}] `json:"parts"`
	Params untrusted.Once[struct {
		TurnsLeft     number `json:"turns_left"`
		Context       number `json:"context_tokens"`
		ContextSource text   `json:"context_source"`
		BytesPerToken number `json:"bytes_per_token"`
		Prices        untrusted.Once[struct {
			Family     text   `json:"family"`
			In         number `json:"in"`
			Out        number `json:"out"`
			Cached     number `json:"cached"`
			CacheWrite number `json:"cache_write"`
			Source     text   `json:"source"`
		}] `json:"prices"`
	}] `json:"params"`
}

// observe reads one line of a journal into the entry, through l (cleared first, so one is
// reused for every line of a journal). A line that is not one JSON object, or gives a field the
// ledger reads twice, is passed over.
func (b *entryBuilder) observe(line []byte, l *journalLine) {
	*l = journalLine{}
	if untrusted.UnmarshalFields(line, l) != nil {
		return
	}
	e := &b.e
	switch l.Event.V {
	case "run_start":
		b.started = true
		e.Start, _ = time.Parse(time.RFC3339Nano, l.TS.V)
		e.Mode, e.Model = l.Mode.V, l.Model.V
		if l.Parent.OK {
			e.Parent = l.Parent.V.Run.V
		}
		for _, s := range l.Settings.V {
			if s.V.Key.V == "role" {
				e.Role = s.V.Value.V
			}
		}
	case "reply":
		// A reply with sent false is a request that never went out: the model was not asked.
		if !l.Sent.OK || l.Sent.V {
			e.Asked++
		}
	case "run_end":
		e.Status = l.Status.V
		if l.Model.Set {
			e.Model = l.Model.V
		}
		if l.Error.OK {
			e.Kind = l.Error.V.Kind.V
		}
		if l.Details.OK {
			e.SpanLines = spanLines(l.Details.V.Lines.V)
			e.Strength = strengthFigure(l.Details.V.VerifyStrength.V)
		}
		e.LocalMs = whole(l.WallMs)
		if l.Host.OK {
			var rec recorded
			e.Parts, rec, e.Costed = parts(l.Host.V)
			e.TurnsLeft = rec.turnsLeft
			if rec.contextSource == "call" {
				e.Context, e.ContextSource = rec.context, "call"
			}
		}
	case "verdict":
		if v := l.Verdict.V; v == "accepted" || v == "rejected" {
			e.Verdict = v
		}
	case "handoff":
		if !l.Handoff.OK {
			return
		}
		h := &engine.HandoffRecord{Bytes: whole(l.Handoff.V.Bytes), Failure: l.Handoff.V.Failure.V}
		for _, f := range l.Files.V {
			if !f.OK || !f.V.File.OK {
				continue
			}
			hf := engine.HandoffFile{File: f.V.File.V, SHA256: f.V.SHA256.V, Added: []string{}}
			for _, a := range f.V.Added.V {
				if a.OK {
					hf.Added = append(hf.Added, a.V)
				}
			}
			h.Files = append(h.Files, hf)
		}
		b.handoff = h
	case "handoff_use":
		if b.handoff == nil {
			return
		}
		u := engine.HandoffUseEvent{Use: l.Use.V, Source: l.Source.V, By: l.By.V, Why: l.Why.V}
		if l.Present.OK && l.Of.OK {
			u.Present, u.Of = new(int(whole(l.Present))), new(int(whole(l.Of)))
		}
		b.handoff.AddUse(u)
	}
}

// strengthFigure is a journal's verify_strength as locum writes it (K/N, or ?), "" for anything
// else: a journal cannot make a figure of its own shape count.
func strengthFigure(s string) string {
	if s == "?" {
		return s
	}
	k, n, ok := strings.Cut(s, "/")
	kn, err1 := strconv.Atoi(k)
	nn, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || kn < 0 || kn > nn || nn > maxMutants || strconv.Itoa(kn) != k || strconv.Itoa(nn) != n {
		return ""
	}
	return s
}

// maxMutants is the most mutants a run may ask for (the mutants setting's ceiling).
const maxMutants = 20

// recorded is what a run_end's host object says of the host: the turns it had left, the context
// it re-read each turn and where that figure came from.
type recorded struct {
	turnsLeft, context int64
	contextSource      string
}

// parts reads the counts of a recorded estimate; the figures derived from them are not read, but
// derived again, so a journal cannot claim a saving its parts do not give.
func parts(h hostRecord) (cost.Parts, recorded, bool) {
	if !h.Parts.OK {
		return cost.Parts{}, recorded{}, false
	}
	var rec recorded
	if pm := h.Params.V; h.Params.OK {
		// The settings' own ceilings: a journal cannot carry more than a run could have.
		if rec.turnsLeft = whole(pm.TurnsLeft); rec.turnsLeft > maxTurns {
			rec.turnsLeft = 0
		}
		if rec.context = whole(pm.Context); rec.context > maxContext {
			rec.context = 0
		}
		rec.contextSource = pm.ContextSource.V
	}
	p := h.Parts.V
	var turns cost.Turns
	if t := p.Turns.V; p.Turns.OK {
		turns = cost.Turns{Direct: small(t.Direct), Delegated: small(t.Delegated)}
	}
	return cost.Parts{Read: whole(p.Read), Write: whole(p.Write), Call: whole(p.Call),
		Result: whole(p.Result), Review: whole(p.Review), Handoff: whole(p.Handoff), Turns: turns, Done: p.Done.V}, rec, true
}

// Recorded is the estimate a run_end's host object gives, derived again from its parts at the
// parameters it names; false where it holds no parts.
func Recorded(host map[string]any) (cost.Estimate, bool) {
	data, err := json.Marshal(host)
	var h hostRecord
	if err != nil || untrusted.UnmarshalFields(data, &h) != nil {
		return cost.Estimate{}, false
	}
	p, rec, ok := parts(h)
	if !ok {
		return cost.Estimate{}, false
	}
	params := cost.Defaults()
	params.TurnsLeft = rec.turnsLeft
	if rec.context > 0 {
		params.Context, params.ContextSource = rec.context, rec.contextSource
	}
	if pm := h.Params.V; h.Params.OK {
		if bpt := pm.BytesPerToken; bpt.OK && bpt.V > 0 && bpt.V < 1000 {
			params.BytesPerToken = bpt.V
		}
		if pr := pm.Prices.V; pm.Prices.OK {
			params.Prices = cost.Prices{Family: pr.Family.V, In: price(pr.In), Out: price(pr.Out), Cached: price(pr.Cached),
				CacheWrite: price(pr.CacheWrite), Source: pr.Source.V}
		}
	}
	return cost.Of(p, params), true
}

// price is a journal's price: a non-negative dollar figure per million tokens, else 0.
func price(v number) float64 {
	if !v.OK || v.V < 0 || v.V > 1e6 {
		return 0
	}
	return v.V
}

// maxCount bounds a count a journal gives (bytes, milliseconds): 64 GiB, far past any run's, small
// enough that no sum of them over the turns left and every journal can overflow.
const maxCount = 1 << 36

// whole is a journal's number as a count: negative, fractional or absurd values read as 0.
func whole(v number) int64 {
	f := v.V
	if !v.OK || f < 0 || f > maxCount || f != float64(int64(f)) {
		return 0
	}
	return int64(f)
}

// maxLines bounds a span's length as a journal gives it.
const maxLines = 1 << 24

// maxTurns is the most turns left a run may record (host_turns_left's ceiling), maxContext the
// largest context (host_context_tokens's), and maxRunTurns the most host turns a run's job may
// be counted as taking either way.
const (
	maxTurns    = 100000
	maxContext  = 10_000_000
	maxRunTurns = 10000
)

// small is a journal's count of host turns: a whole number up to maxRunTurns, else 0.
func small(v number) int64 {
	if n := whole(v); n <= maxRunTurns {
		return n
	}
	return 0
}

// spanLines reads "A-B" as its number of lines; 0 where it is not one.
func spanLines(s string) int {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x < 1 || y < x || y-x >= maxLines {
		return 0
	}
	return y - x + 1
}

// The keys a ledger sums by.
var Bys = []string{"model", "mode", "role", "week"}

// Row is the sum of the runs that share a key.
type Row struct {
	Key  string `json:"key"`
	Runs int    `json:"runs"`
	Kept int    `json:"kept"`
	// KeepRate is Kept over Runs.
	KeepRate float64 `json:"keep_rate"`
	// Accepted and Rejected are the kept runs a person judged later; RightRate is Accepted over
	// the two, null where none was judged.
	Accepted  int      `json:"accepted"`
	Rejected  int      `json:"rejected"`
	RightRate *float64 `json:"right_rate"`
	// Costed is how many runs recorded the host's side; the token and money figures are theirs.
	Costed int `json:"costed"`
	// Shown and Blind are the kept runs whose verify was measured against mutants: Shown those it
	// rejected every one of, Blind those it was not shown able to fail on (it passed them all,
	// or none could be made or run), whose diffs a host had to read.
	Shown int `json:"strength_shown"`
	Blind int `json:"strength_blind"`
	// CostRefusals are transforms refused for their cost (does_not_pay): they did no work, so
	// they are not in Runs or the keep rate; what their call and refusal cost is in the sums.
	CostRefusals int `json:"cost_refusals"`
	// UsageErrors are runs refused for their input before any work (Entry.UsageError): they
	// are in no other figure of the row.
	UsageErrors int `json:"usage_errors"`
	// Handoffs are the red runs whose result handed the host a handoff, HandoffBytes what those
	// cost it to read (in the delegation's figures), and HandoffsUsed, HandoffsUnused and
	// HandoffsUnknown what became of them (engine.HandoffUseRule).
	Handoffs        int   `json:"handoffs"`
	HandoffBytes    int64 `json:"handoff_bytes"`
	HandoffsUsed    int   `json:"handoffs_used"`
	HandoffsUnused  int   `json:"handoffs_unused"`
	HandoffsUnknown int   `json:"handoffs_unknown"`
	// TurnsSaved are the host turns saved net (done directly less delegated), TurnTokens their
	// re-reads of the context; Saved and Carried the byte term.
	TurnsSaved int64     `json:"turns_saved"`
	TurnTokens int64     `json:"turn_tokens"`
	Saved      cost.Side `json:"saved"`
	Carried    int64     `json:"carried"`
	Net        int64     `json:"net_tokens"`
	USD        float64   `json:"usd"`
	LocalMs    int64     `json:"local_ms"`
	// Host is the row's runs as the host's transcripts measured them, where the operator named
	// them.
	Host *RowHost `json:"host,omitempty"`
}

func (r *Row) add(e Entry, p cost.Params, right *float64) {
	if e.UsageError() {
		r.UsageErrors++
		return
	}
	if e.Kind == KindDoesNotPay {
		r.CostRefusals++
	} else {
		r.Runs++
	}
	if e.Kept() {
		r.Kept++
	}
	if e.Shown() {
		r.Shown++
	}
	if e.Blind() {
		r.Blind++
	}
	switch e.Verdict {
	case "accepted":
		r.Accepted++
	case "rejected":
		r.Rejected++
	}
	if h := e.Handoff; h != nil {
		r.Handoffs++
		r.HandoffBytes = cost.AddTokens(r.HandoffBytes, h.Bytes)
		switch h.Use {
		case engine.HandoffUsed:
			r.HandoffsUsed++
		case engine.HandoffUnused:
			r.HandoffsUnused++
		default:
			r.HandoffsUnknown++
		}
	}
	r.LocalMs = cost.AddTokens(r.LocalMs, e.LocalMs)
	if e.Costed {
		r.Costed++
		est := e.Judged(p, right)
		r.TurnsSaved = cost.AddTokens(r.TurnsSaved, est.TurnsSaved)
		r.TurnTokens = cost.AddTokens(r.TurnTokens, est.TurnTokens)
		r.Saved.In = cost.AddTokens(r.Saved.In, est.Saved.In)
		r.Saved.Out = cost.AddTokens(r.Saved.Out, est.Saved.Out)
		r.Carried = cost.AddTokens(r.Carried, est.Carried)
		r.Net = cost.AddTokens(r.Net, est.Net)
		r.USD += est.USD
	}
}

// StrengthWords says how the row's kept runs stood against mutants of their changes; "" where
// none was measured.
func (r Row) StrengthWords() string {
	if r.Shown+r.Blind == 0 {
		return ""
	}
	return fmt.Sprintf("%d kept run(s) by a verify that rejected every mutant of the change, %d by one not shown able to fail on it (their diffs were the host's to read)", r.Shown, r.Blind)
}

func (r *Row) finish() {
	r.USD = cost.Dollars(r.USD)
	if r.Runs > 0 {
		r.KeepRate = float64(r.Kept) / float64(r.Runs)
	}
	if judged := r.Accepted + r.Rejected; judged > 0 {
		rate := float64(r.Accepted) / float64(judged)
		r.RightRate = &rate
	}
}

// Method says how each figure of a ledger was reached.
type Method struct {
	Runs    string `json:"runs"`
	Tokens  string `json:"tokens"`
	Money   string `json:"money"`
	LocalMs string `json:"local_ms"`
	Turns   string `json:"turns"`
	// Handoffs says how a handoff's bytes and use were reached.
	Handoffs string `json:"handoffs"`
}

// Ledger is the runs summed by one key, with their total.
type Ledger struct {
	By     string      `json:"by"`
	Since  *time.Time  `json:"since"`
	Params cost.Params `json:"params"`
	Rows   []Row       `json:"rows"`
	Total  Row         `json:"total"`
	Method Method      `json:"method"`
	// Uncosted counts the runs whose journal holds no host-cost parts: counted in runs, not in
	// tokens or money.
	Uncosted int `json:"uncosted"`
	// Discounted counts the kept runs nobody judged whose saving was weighed by their role's
	// right rate (rightRates).
	Discounted int `json:"discounted"`
}

// roleKey names one mode, role and model's runs.
type roleKey struct{ mode, role, model string }

// minJudged is how many of a role's kept runs a person must have judged before their right
// rate weighs the rest.
const minJudged = 5

// rightRates are, for each mode, role and model whose kept runs a person judged at least
// minJudged times (runs accept, runs reject), the share judged right.
func rightRates(entries []Entry) map[roleKey]*float64 {
	accepted, judged := map[roleKey]int{}, map[roleKey]int{}
	for _, e := range entries {
		k := roleKey{e.Mode, e.Role, e.Model}
		switch e.Verdict {
		case "accepted":
			accepted[k]++
			judged[k]++
		case "rejected":
			judged[k]++
		}
	}
	out := map[roleKey]*float64{}
	for k, n := range judged {
		if n >= minJudged {
			r := float64(accepted[k]) / float64(n)
			out[k] = &r
		}
	}
	return out
}

// Sum sums entries by one of Bys, with the tokens and money at p (the turns left are each run's).
func Sum(entries []Entry, by string, p cost.Params) (Ledger, error) {
	if !slices.Contains(Bys, by) {
		return Ledger{}, fmt.Errorf("cannot sum by %q: want one of %s", by, strings.Join(Bys, ", "))
	}
	l := Ledger{By: by, Params: p, Rows: []Row{}, Total: Row{Key: "total"}, Method: Method{
		Runs: "measured: each run's journal",
		Turns: fmt.Sprintf("%s: the host turns each run's job takes done directly less those its delegation took, each re-reading a context of %d tokens (%s, or what the call said) at the cached price",
			cost.MethodEstimated, p.Context, p.ContextSource),
		Tokens:  fmt.Sprintf("%s: the bytes of each run's parts at %g bytes a token, over the turns left each run recorded", cost.MethodEstimated, p.BytesPerToken),
		Money:   fmt.Sprintf("%s: the tokens at %s prices (%s): $%g in, $%g out, $%g cached, per million", cost.MethodEstimated, p.Prices.Family, p.Prices.Source, p.Prices.In, p.Prices.Out, p.Prices.Cached),
		LocalMs: "measured: each run's wall time on this machine",
		Handoffs: "measured: each red run's handoff as its result carried it, its bytes counted in the delegation's cost (read like the rest of the result, estimated in tokens as above); " +
			engine.HandoffUseRule,
	}}
	rights := rightRates(entries)
	index := map[string]int{}
	for _, e := range entries {
		key := keyOf(e, by)
		i, ok := index[key]
		if !ok {
			i = len(l.Rows)
			index[key] = i
			l.Rows = append(l.Rows, Row{Key: key})
		}
		right := rights[roleKey{e.Mode, e.Role, e.Model}]
		l.Rows[i].add(e, p, right)
		l.Total.add(e, p, right)
		if right != nil && e.Kept() && e.Verdict == "" {
			l.Discounted++
		}
		if !e.Costed && !e.UsageError() {
			l.Uncosted++
		}
	}
	for i := range l.Rows {
		l.Rows[i].finish()
	}
	l.Total.finish()
	sort.SliceStable(l.Rows, func(i, j int) bool { return l.Rows[i].Key < l.Rows[j].Key })
	return l, nil
}

func keyOf(e Entry, by string) string {
	switch by {
	case "model":
		return orDash(e.Model)
	case "mode":
		return orDash(e.Mode)
	case "role":
		if e.Role == "" {
			return "(model named)"
		}
		return e.Role
	}
	y, w := e.Start.UTC().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Report is what `locum ledger` and the MCP ledger tool return: the ledger, the break-even of
// each mode and role, and how many journals were left out of both, and why.
type Report struct {
	Ledger
	BreakEven []cost.Rule `json:"break_even"`
	// Direct is what doing each role's tasks itself cost the host, as the host arm of a signed
	// A/B record measured it; nil where the workspace has none.
	Direct *DirectMeasured `json:"direct_measured,omitempty"`
	// Standing is what locum's tool list costs a host each turn it is installed.
	Standing StandingEstimate `json:"standing_per_turn"`
	Left
	// Host is what the host's own transcripts measured, where the operator named them.
	Host *HostReport `json:"host,omitempty"`
}

// Build reads the journals in dir sealed under key and sums them by by, at p.
func Build(dir string, key []byte, f Filter, by string, p cost.Params) (Report, error) {
	rep, _, err := build(dir, key, f, by, p)
	return rep, err
}

// build is Build, with the entries the sums counted.
func build(dir string, key []byte, f Filter, by string, p cost.Params) (Report, []Entry, error) {
	// The journals are read once: the break-even is the whole history's, whatever window the
	// sums show, so the window is applied here rather than by Read.
	all, left, err := Read(dir, key, Filter{Root: f.Root})
	if err != nil {
		return Report{}, nil, err
	}
	var entries []Entry
	for _, e := range all {
		if (f.Since.IsZero() || !e.Start.Before(f.Since)) && (f.Mode == "" || e.Mode == f.Mode) {
			entries = append(entries, e)
		}
	}
	l, err := Sum(entries, by, p)
	if err != nil {
		return Report{}, nil, err
	}
	if !f.Since.IsZero() {
		since := f.Since.UTC()
		l.Since = &since
	}
	return Report{Ledger: l, BreakEven: BreakEven(all, p), Standing: StandingPerTurn(p), Left: left}, entries, nil
}

// StandingEstimate is what being installed costs a host on each turn of a session that has
// locum's MCP server, delegating or not: its tool list and instructions re-read at the cached
// price. The ledger states it per turn; where it can see the host's sessions (its transcripts),
// it charges it per session, measured.
type StandingEstimate struct {
	Method string  `json:"method"`
	Bytes  int64   `json:"bytes"`
	Tokens int64   `json:"tokens"`
	USD    float64 `json:"usd_per_turn"`
}

// StandingPerTurn is the standing cost at p.
func StandingPerTurn(p cost.Params) StandingEstimate {
	tokens := p.Tokens(cost.StandingBytes)
	return StandingEstimate{Method: cost.MethodEstimated, Bytes: cost.StandingBytes, Tokens: tokens,
		USD: cost.Dollars(float64(tokens) * p.Prices.Cached / 1e6)}
}

// DirectMeasured is what the host arm of an A/B record measured of doing each role's tasks
// itself: a fresh headless session answering one task's prompt, its own start included.
type DirectMeasured struct {
	Record string                `json:"record"`
	Roles  map[string]DirectCost `json:"roles"`
}

// DirectCost is a role's measured direct cost: the mean per A/B sample of the host's own turns,
// tokens and money.
type DirectCost struct {
	Method  string  `json:"method"`
	Samples int     `json:"samples"`
	Turns   float64 `json:"turns"`
	Tokens  float64 `json:"tokens"`
	USD     float64 `json:"usd"`
}
