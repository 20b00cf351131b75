package evals

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/locumdev/locum/untrusted"
)

// MethodMeasured labels a figure the host itself reported, as runner/cost labels its own
// estimates "estimated".
const MethodMeasured = "measured"

// The bounds of what a host may report for one turn. They are far above any real turn (a turn of
// a million requests, a trillion tokens or a million dollars is a broken report, not a cost), and
// low enough that the sums over a record of at most maxRecordBytes cannot overflow.
const (
	MaxHostResultBytes = 4 << 20
	MaxHostNumTurns    = 1_000_000
	MaxHostTokens      = 1_000_000_000_000
	MaxHostUSD         = 1_000_000
	maxUsageNote       = 300
)

// HostUsage is what one host turn cost the host, as the host command printed it: Claude Code's
// `claude -p --output-format json` ends with one result object carrying num_turns (its own
// requests), usage (input, cache creation, cache read and output tokens) and total_cost_usd.
// It is the host's word, labelled measured: locum cannot observe the host's bill.
type HostUsage struct {
	Method                   string  `json:"method"`
	NumTurns                 int64   `json:"num_turns"`
	InputTokens              int64   `json:"input_tokens"`
	CacheCreationInputTokens int64   `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64   `json:"cache_read_input_tokens"`
	OutputTokens             int64   `json:"output_tokens"`
	TotalCostUSD             float64 `json:"total_cost_usd"`
}

// Tokens is every token the turn's requests read or wrote.
func (u HostUsage) Tokens() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
}

// check reports the first figure outside what a host may report, or "".
func (u HostUsage) check() string {
	switch {
	case u.Method != MethodMeasured:
		return fmt.Sprintf("its method is %q, not %q", u.Method, MethodMeasured)
	case u.NumTurns < 0 || u.NumTurns > MaxHostNumTurns:
		return fmt.Sprintf("num_turns %d is outside 0..%d", u.NumTurns, MaxHostNumTurns)
	case math.IsNaN(u.TotalCostUSD) || u.TotalCostUSD < 0 || u.TotalCostUSD > MaxHostUSD:
		return fmt.Sprintf("total_cost_usd %v is outside 0..%d", u.TotalCostUSD, MaxHostUSD)
	}
	for _, f := range []struct {
		name string
		n    int64
	}{{"input_tokens", u.InputTokens}, {"cache_creation_input_tokens", u.CacheCreationInputTokens},
		{"cache_read_input_tokens", u.CacheReadInputTokens}, {"output_tokens", u.OutputTokens}} {
		if f.n < 0 || f.n > MaxHostTokens {
			return fmt.Sprintf("%s %d is outside 0..%d", f.name, f.n, int64(MaxHostTokens))
		}
	}
	return ""
}

// HostResult is a host turn's output read for its answer and its usage.
type HostResult struct {
	// Answer is what the predicate grades: the output itself, or the result text of the JSON
	// result object the host printed.
	Answer string
	// Usage is the usage that object reported; nil when the host printed none.
	Usage *HostUsage
	// Note says why output that looked like a result object gave no usage; "" for plain text.
	Note string
}

// ReadHostResult reads what a host command printed. Plain text is the answer as it is, with no
// usage and no note. Output that is one JSON object, or ends with a line that is one (the last
// line of `--output-format stream-json`), is read as Claude Code's result object when its type is
// "result": its result text is the answer, and its num_turns, usage and total_cost_usd the usage.
// Such output that does not read as JSON, and names "result", gives the output as the answer, no
// usage and a note.
// What the host prints is untrusted: the object is read under MaxHostResultBytes with no key
// named twice and no nesting past untrusted.MaxDepth, every count is a whole number and the cost a
// finite number, none negative nor past its bound, and other fields are ignored. Anything else
// gives no usage and a note saying why, never an error.
func ReadHostResult(output string) HostResult {
	plain := HostResult{Answer: output}
	s := strings.TrimSpace(output)
	if s == "" || s[len(s)-1] != '}' {
		return plain
	}
	var candidates []string
	if s[0] == '{' {
		candidates = append(candidates, s)
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		if last := strings.TrimSpace(s[i+1:]); strings.HasPrefix(last, "{") {
			candidates = append(candidates, last)
		}
	}
	note := ""
	for _, c := range candidates {
		r, why, isResult := readResultObject(c)
		switch {
		case why == "" && !isResult:
			// JSON, but not a result object: an answer that happens to be JSON.
			return plain
		case why == "":
			return r
		case isResult:
			r.Note = capNote(why)
			return r
		case note == "" && strings.Contains(c, `"result"`):
			// Only what could be a result object earns a note: plain text that happens to
			// start and end with braces is an answer, as it always was.
			note = why
		}
	}
	if note == "" {
		return plain
	}
	plain.Note = capNote("the host printed JSON that locum could not read for its usage: " + note)
	return plain
}

// readResultObject reads one candidate object. why is "" when it read as JSON; isResult says it
// is a result object, whose answer r then holds even when its usage could not be read (why says
// why).
func readResultObject(c string) (r HostResult, why string, isResult bool) {
	if len(c) > MaxHostResultBytes {
		return HostResult{}, fmt.Sprintf("an object of %d bytes, more than the %d MiB locum reads", len(c), MaxHostResultBytes>>20), false
	}
	data := []byte(c)
	if err := untrusted.CheckKeys(data); err != nil {
		return HostResult{}, err.Error(), false
	}
	var obj struct {
		Type         json.RawMessage `json:"type"`
		Result       json.RawMessage `json:"result"`
		NumTurns     json.RawMessage `json:"num_turns"`
		TotalCostUSD json.RawMessage `json:"total_cost_usd"`
		Usage        json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return HostResult{}, err.Error(), false
	}
	var typ string
	if json.Unmarshal(obj.Type, &typ) != nil || typ != "result" {
		return HostResult{}, "", false
	}
	if len(obj.Result) > 0 && string(obj.Result) != "null" {
		if err := json.Unmarshal(obj.Result, &r.Answer); err != nil {
			return r, "the host's result object: its result is not a string", true
		}
	}
	u := HostUsage{Method: MethodMeasured}
	var err error
	if u.NumTurns, err = count(obj.NumTurns, "num_turns", MaxHostNumTurns, false); err != nil {
		return r, "the host's result object: " + err.Error(), true
	}
	if u.TotalCostUSD, err = dollars(obj.TotalCostUSD); err != nil {
		return r, "the host's result object: " + err.Error(), true
	}
	var tokens struct {
		InputTokens              json.RawMessage `json:"input_tokens"`
		CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     json.RawMessage `json:"cache_read_input_tokens"`
		OutputTokens             json.RawMessage `json:"output_tokens"`
	}
	if len(obj.Usage) == 0 || obj.Usage[0] != '{' {
		return r, "the host's result object has no usage object", true
	}
	if err := json.Unmarshal(obj.Usage, &tokens); err != nil {
		return r, "the host's usage: " + err.Error(), true
	}
	for _, f := range []struct {
		raw      json.RawMessage
		name     string
		dst      *int64
		optional bool
	}{
		{tokens.InputTokens, "usage.input_tokens", &u.InputTokens, false},
		// The API reports no cache figure (or null) for a request that used no cache.
		{tokens.CacheCreationInputTokens, "usage.cache_creation_input_tokens", &u.CacheCreationInputTokens, true},
		{tokens.CacheReadInputTokens, "usage.cache_read_input_tokens", &u.CacheReadInputTokens, true},
		{tokens.OutputTokens, "usage.output_tokens", &u.OutputTokens, false},
	} {
		if *f.dst, err = count(f.raw, f.name, MaxHostTokens, f.optional); err != nil {
			return r, "the host's result object: " + err.Error(), true
		}
	}
	r.Usage = &u
	return r, "", true
}

// count reads a whole number from 0 to max; an optional one absent or null is 0.
func count(raw json.RawMessage, name string, max int64, optional bool) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if optional {
			return 0, nil
		}
		return 0, fmt.Errorf("it has no %s", name)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 || n > max {
		return 0, fmt.Errorf("%s is %s, not a whole number from 0 to %d", name, clip(string(raw)), max)
	}
	return n, nil
}

// dollars reads total_cost_usd: a finite number from 0 to MaxHostUSD.
func dollars(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, fmt.Errorf("it has no total_cost_usd")
	}
	bad := fmt.Errorf("total_cost_usd is %s, not a number from 0 to %d", clip(string(raw)), MaxHostUSD)
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, bad
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > MaxHostUSD {
		return 0, bad
	}
	return f + 0, nil // -0 reads as 0
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func capNote(s string) string {
	if len(s) <= maxUsageNote {
		return s
	}
	cut := maxUsageNote - 3
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// CellUsage is what a cell's host turns that printed their usage cost in all, folded from the
// turns like the cell's counts.
type CellUsage struct {
	Method string `json:"method"`
	// Measured counts the turns that printed their usage; the sums are over them.
	Measured                 int     `json:"measured"`
	NumTurns                 int64   `json:"num_turns"`
	InputTokens              int64   `json:"input_tokens"`
	CacheCreationInputTokens int64   `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64   `json:"cache_read_input_tokens"`
	OutputTokens             int64   `json:"output_tokens"`
	TotalCostUSD             float64 `json:"total_cost_usd"`
}

func (c *CellUsage) add(u HostUsage) {
	c.Method = MethodMeasured
	c.Measured++
	c.NumTurns += u.NumTurns
	c.InputTokens += u.InputTokens
	c.CacheCreationInputTokens += u.CacheCreationInputTokens
	c.CacheReadInputTokens += u.CacheReadInputTokens
	c.OutputTokens += u.OutputTokens
	c.TotalCostUSD += u.TotalCostUSD
}

// hasHostUsage says a record holds what only version 2 holds: a host turn's usage or usage note.
func hasHostUsage(turns []Turn) bool {
	for _, t := range turns {
		if t.HostUsage != nil || t.UsageNote != "" {
			return true
		}
	}
	return false
}

// RecordVersion is the version a record of these turns is written as: 1, the format before
// host usage, when no turn holds any, so a capture whose host printed plain text writes what it
// always wrote; 2 otherwise.
func RecordVersion(turns []Turn) int {
	if hasHostUsage(turns) {
		return 2
	}
	return 1
}

// usageProblems lists what is wrong with the usage a record's turns hold: usage on a local
// turn, a figure out of bounds, usage in a version 1 record. The cells' sums are checked by
// re-folding them with the counts.
func usageProblems(version int, turns []Turn) []string {
	var out []string
	if version < 2 && hasHostUsage(turns) {
		out = append(out, fmt.Sprintf("the record says version %d, which holds no host usage, yet a host turn carries some", version))
	}
	for _, t := range turns {
		if t.Arm != ArmHost && (t.HostUsage != nil || t.UsageNote != "") {
			out = append(out, fmt.Sprintf("turn %s carries host usage, but it is not a host turn", t.Key()))
			continue
		}
		if t.HostUsage != nil {
			if why := t.HostUsage.check(); why != "" {
				out = append(out, fmt.Sprintf("turn %s: its host usage is not well-formed: %s", t.Key(), why))
			}
		}
	}
	return out
}

// renderHostUsage adds the host arm's measured usage to the register, per task: the means over
// the turns that printed theirs. A record with none renders as it always did.
func renderHostUsage(b *strings.Builder, rec *Record) {
	if !hasHostUsage(rec.Turns) {
		return
	}
	b.WriteString("\nWhat doing each task cost the host (arm H), as the host command printed it (measured): the mean per turn of arm H that printed it, " +
		"num_turns counting the host's own requests within that turn.\n\n")
	b.WriteString("| task | H measured | num_turns | input tokens | cache write tokens | cache read tokens | output tokens | USD |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range Tasks() {
		u := rec.Cells[t.ID][ArmHost].Usage
		if u == nil || u.Measured == 0 {
			fmt.Fprintf(b, "| %s | 0/%d | - | - | - | - | - | - |\n", t.ID, rec.K)
			continue
		}
		n := float64(u.Measured)
		fmt.Fprintf(b, "| %s | %d/%d | %.1f | %.0f | %.0f | %.0f | %.0f | %.4f |\n", t.ID, u.Measured, rec.K, float64(u.NumTurns)/n,
			float64(u.InputTokens)/n, float64(u.CacheCreationInputTokens)/n, float64(u.CacheReadInputTokens)/n, float64(u.OutputTokens)/n, u.TotalCostUSD/n)
	}
	notes := 0
	for _, t := range rec.Turns {
		if t.UsageNote != "" {
			notes++
		}
	}
	if notes > 0 {
		fmt.Fprintf(b, "\n%d host turns printed output that looked like a result object but gave no usage; each turn's usage_note in the record says why.\n", notes)
	}
}
