package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/untrusted"
)

// Status is the first word of a receipt.
type Status string

// The statuses, and the exit codes they carry.
const (
	StatusOK      Status = "OK"      // exit 0
	StatusRed     Status = "RED"     // exit 1: a red verdict
	StatusRefused Status = "REFUSED" // exit 1: a refusal before any request
	StatusError   Status = "ERROR"   // exit 2: could not run
)

// ErrorInfo says what went wrong, for --json.
type ErrorInfo struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Command is the one command a person runs to lift a refusal, where there is one.
	Command string `json:"command,omitempty"`
}

// errorInfo is err as a result's error, with the command a refusal names.
func errorInfo(kind string, err error) *ErrorInfo {
	info := &ErrorInfo{Kind: kind, Message: err.Error()}
	var refusal *RefusalError
	if errors.As(err, &refusal) {
		info.Command = refusal.Command
	}
	return info
}

// Result is the one result of a run: the receipt on stderr, and with --json the object on
// stdout. Every key is always present; null where unused. spec/result.schema.json describes it.
type Result struct {
	Status   Status     `json:"status"`
	Mode     string     `json:"mode"`
	RunID    string     `json:"run_id"`
	Model    *string    `json:"model"`
	Routing  *string    `json:"routing"`
	Attempts int        `json:"attempts"`
	In       *int64     `json:"in_tokens"`
	Out      *int64     `json:"out_tokens"`
	TTFTms   *int64     `json:"ttft_ms"`
	TimeMs   int64      `json:"time_ms"`
	Rate     *float64   `json:"rate"`
	Spend    string     `json:"spend"`
	Journal  *string    `json:"journal"`
	ExitCode int        `json:"exit_code"`
	Error    *ErrorInfo `json:"error"`
	// Baseline is what the verify said of the tree before the run changed it: red, green, or
	// skipped; nil for a mode or a run that did not reach it.
	Baseline *string `json:"baseline"`
	// Sandbox is how the verify was contained (bwrap, or none: a process group); nil for a mode
	// or a run that ran no verify.
	Sandbox *string `json:"sandbox"`
	// VerifyStrength is how many small changes to the kept span (mutants) the verify rejected,
	// K/N, or ? where none could be run; nil where none were asked for or nothing was kept.
	VerifyStrength *string `json:"verify_strength"`
	// Host is what the run saved or cost the host that asked for it, estimated, with its parts:
	// the journal's. The result carries only its sum (HostSaved), since every byte of a result is
	// one the host pays to read. Both are nil where no front end measured its side.
	Host      *cost.Estimate `json:"-"`
	HostSaved *cost.Summary  `json:"host"`
	// Handoff is what a red run hands the host that now does the job itself (Handoff): null
	// for any other status.
	Handoff *Handoff `json:"handoff"`
	// Details is the mode's own part of the result (for transform: file, lines, kept...): a
	// pointer to the mode's details struct (Run.SetDetails), nil where the run wrote none. It
	// stays last: WriteJSON streams it after the rest.
	Details any `json:"details"`
}

// Receipt renders the one-line receipt, as the journal keeps it: a figure the server did not
// report prints ?, never 0.
func (r *Result) Receipt() string { return r.receipt(true) }

// ShortReceipt is the receipt a host reads by default: the full one less the figures that cost
// the host tokens to read and change nothing it does (the time to first token, the decode rate,
// a local spend that is always $0.00). The journal, runs show and --json keep them.
func (r *Result) ShortReceipt() string { return r.receipt(false) }

func (r *Result) receipt(full bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s mode=%s model=%s", r.Status, r.Mode, orQ(r.Model))
	if r.Routing != nil {
		fmt.Fprintf(&b, " routing=%s", *r.Routing)
	}
	// Each request counts once in every mode; dedup's are embedding batches, not attempts at
	// one answer, and its receipt calls them so.
	fmt.Fprintf(&b, " %s=%d in=%s out=%s", counted(r.Mode), r.Attempts, tokens(r.In), tokens(r.Out))
	if full {
		if r.TTFTms != nil && *r.TTFTms >= 0 {
			fmt.Fprintf(&b, " ttft=%dms", *r.TTFTms)
		} else {
			b.WriteString(" ttft=?")
		}
	}
	fmt.Fprintf(&b, " time=%dms", r.TimeMs)
	if full {
		if r.Rate != nil && *r.Rate > 0 && *r.Rate <= maxPlausibleRate {
			fmt.Fprintf(&b, " rate=%.1ft/s", *r.Rate)
		} else {
			b.WriteString(" rate=?")
		}
		fmt.Fprintf(&b, " spend=%s", r.Spend)
	}
	switch {
	case r.HostSaved != nil:
		b.WriteString(" " + r.HostSaved.Receipt())
	case r.Host != nil:
		b.WriteString(" " + r.Host.Receipt())
	}
	if r.Baseline != nil {
		fmt.Fprintf(&b, " baseline=%s", *r.Baseline)
	}
	if r.Sandbox != nil {
		fmt.Fprintf(&b, " sandbox=%s", *r.Sandbox)
	}
	if r.VerifyStrength != nil {
		fmt.Fprintf(&b, " verify_strength=%s", *r.VerifyStrength)
	}
	if r.RunID != "" && r.Journal != nil {
		// The run id, last, lets a host's own usage log be joined to the run's journal.
		fmt.Fprintf(&b, " run=%s", r.RunID)
	}
	return b.String()
}

// Outcome is the run's one line for a person or a host after it ended, before the receipt, as
// its mode words it ("transform: kept a.go lines 3-9 (+2 -1), verify exit 0"); "" where the mode
// has none to say, or the run never reached that far.
func (r *Result) Outcome() string {
	if m, ok := LookupMode(r.Mode); ok && m.Outcome != nil {
		return m.Outcome(r)
	}
	return ""
}

func orQ(s *string) string {
	if s == nil || *s == "" {
		return "?"
	}
	return untrusted.Escape(*s)
}

func tokens(n *int64) string {
	if n == nil || !plausibleTokens(*n) {
		return "?"
	}
	return strconv.FormatInt(*n, 10) + "t"
}

// RedError is a mode's red verdict: the work ran and did not pass (exit 1).
type RedError struct {
	Reason string
	// Kind names a red verdict of its own kind (unchanged, repeated, no_change); "" is red.
	Kind string
	// Worded: as RefusalError's (Redf).
	Worded rails.WordedText
}

// Redf is a red verdict of kind whose message may name settings as {setting}.
func Redf(kind, format string, args ...any) *RedError {
	return &RedError{Kind: kind, Worded: rails.Textf(format, args...)}
}

func (e *RedError) Error() string { return wordedOr(e.Worded, e.Reason, rails.FlagName) }

// Words is the message with its settings named by name.
func (e *RedError) Words(name func(string) string) string {
	return wordedOr(e.Worded, e.Reason, name)
}

// RefusalError is a refusal before any request that is not one of the rails' own types (a role
// with no earned routing, say): exit 1.
type RefusalError struct {
	Reason string
	// Kind names a refusal of its own kind (does_not_pay); "" is refused.
	Kind string
	// Command is what the person runs to lift the refusal ("locum roles accept code MODEL"), or "".
	Command string
	// Worded, where its Format is set, is the message naming settings as {setting}, for each
	// front end to word its own way (Refusalf); Reason is then unused.
	Worded rails.WordedText
}

// Refusalf is a refusal whose message may name settings as {setting}.
func Refusalf(format string, args ...any) *RefusalError {
	return &RefusalError{Worded: rails.Textf(format, args...)}
}

func (e *RefusalError) Error() string { return wordedOr(e.Worded, e.Reason, rails.FlagName) }

// Words is the message with its settings named by name.
func (e *RefusalError) Words(name func(string) string) string {
	return wordedOr(e.Worded, e.Reason, name)
}

// KindBadInput is the error kind of input locum cannot work with (a file that does not exist, a
// range past the end, a symbol not found): a usage error, refused before any work.
const KindBadInput = "bad_input"

// BadInputError is input locum cannot work with (exit 2), refused before any request.
type BadInputError struct {
	Reason string
	// Worded: as RefusalError's (BadInputf).
	Worded rails.WordedText
}

// BadInputf is bad input whose message may name settings as {setting}.
func BadInputf(format string, args ...any) *BadInputError {
	return &BadInputError{Worded: rails.Textf(format, args...)}
}

func (e *BadInputError) Error() string { return wordedOr(e.Worded, e.Reason, rails.FlagName) }

// Words is the message with its settings named by name.
func (e *BadInputError) Words(name func(string) string) string {
	return wordedOr(e.Worded, e.Reason, name)
}

func wordedOr(w rails.WordedText, plain string, name func(string) string) string {
	if w.Format == "" {
		return plain
	}
	return w.Words(name)
}

// ResultError carries a finished run's failure on as an error, for a caller that runs the engine
// inside a larger job: Classify gives back the run's own status, kind and exit code.
type ResultError struct{ Result *Result }

func (e *ResultError) Error() string {
	if e.Result.Error == nil {
		return string(e.Result.Status)
	}
	return e.Result.Error.Message
}

// Classify maps an error to the status, the error kind for --json, and the exit code. It is the
// one place that decides what an error means.
func Classify(err error) (Status, string, int) {
	var (
		endpoint *rails.EndpointError
		budget   *rails.BudgetError
		off      *rails.OffLoopbackError
		refusal  *RefusalError
		red      *RedError
		reply    *rails.ReplyError
		file     *rails.FileError
		setting  *packs.SettingError
		mode     *packs.ModeError
		bad      *BadInputError
		httpErr  *client.HTTPError
		unreach  *client.UnreachableError
		redirect *client.RedirectError
		tooLarge *client.TooLargeError
		timeout  *client.TimeoutError
		sig      *client.SignalError
		embed    *client.BadEmbeddingError
		verdict  *NoVerdictError
		oversize *OversizeError
		fit      *client.ContextError
		noTools  *client.ToolsUnsupportedError
		overflow *client.ServerContextError
		noSbx    *rails.NoSandboxError
		planted  *rails.PlantedGitError
		unread   *rails.UnreadableTreeError
		huge     *rails.TreeTooLargeError
		cut      *client.InputTruncatedError
		loading  *client.LoadingError
		restore  *rails.RestoreError
		wrote    *VerifyWroteError
		result   *ResultError
		gitConf  *gitsafe.ConfigError
		missing  *gitsafe.MissingObjectsError
		gitDir   *gitsafe.GitDirError
		hardLink *rails.HardLinkError
		unlisted *ModelNotListedError
	)
	switch {
	case err == nil:
		return StatusOK, "", 0
	case errors.As(err, &result) && result.Result.Error != nil && result.Result.ExitCode != 0:
		return result.Result.Status, result.Result.Error.Kind, result.Result.ExitCode
	case errors.As(err, &restore):
		// Whatever the verdict was, the file is not as the run promised: that outranks it.
		return StatusError, "restore_failed", 2
	case errors.As(err, &wrote):
		return StatusError, "verify_wrote", 2
	case errors.As(err, &red):
		if red.Kind != "" {
			return StatusRed, red.Kind, 1
		}
		return StatusRed, "red", 1
	case errors.As(err, &endpoint), errors.As(err, &off):
		return StatusRefused, "off_loopback", 1
	case errors.As(err, &budget), errors.As(err, &oversize):
		return StatusRefused, "input_budget", 1
	case errors.As(err, &fit), errors.As(err, &overflow):
		return StatusRefused, "context_window", 1
	case errors.As(err, &noTools):
		return StatusRefused, "no_tools", 1
	case errors.As(err, &noSbx):
		return StatusRefused, "no_sandbox", 1
	case errors.As(err, &unread), errors.As(err, &huge):
		return StatusRefused, "tree_unchecked", 1
	case errors.As(err, &unlisted) && unlisted.Refused:
		return StatusRefused, "model_not_listed", 1
	case errors.As(err, &refusal):
		if refusal.Kind != "" {
			return StatusRefused, refusal.Kind, 1
		}
		return StatusRefused, "refused", 1
	case errors.As(err, &gitConf):
		return StatusRefused, "refused", 1
	case errors.As(err, &missing):
		return StatusRefused, "partial_clone", 1
	case errors.As(err, &gitDir):
		return StatusRefused, "git_dir", 1
	case errors.As(err, &hardLink):
		return StatusRefused, "hard_link", 1
	case errors.As(err, &sig):
		return StatusError, "signal", 2
	case errors.As(err, &verdict):
		return StatusError, "verify_no_verdict", 2
	case errors.As(err, &planted):
		return StatusError, "verify_planted_git", 2
	case errors.As(err, &cut):
		return StatusError, "input_truncated", 2
	case errors.As(err, &reply):
		return StatusError, "reply_" + string(reply.Class), 2
	case errors.As(err, &file), errors.As(err, &setting), errors.As(err, &mode), errors.As(err, &bad):
		return StatusError, KindBadInput, 2
	case errors.As(err, &unreach):
		return StatusError, "no_server", 2
	case errors.As(err, &loading):
		return StatusError, "loading", 2
	case errors.As(err, &httpErr):
		return StatusError, "http", 2
	case errors.As(err, &redirect):
		return StatusError, "redirect", 2
	case errors.As(err, &tooLarge):
		return StatusError, "too_large", 2
	case errors.As(err, &timeout):
		return StatusError, "timeout", 2
	case errors.As(err, &embed):
		return StatusError, "malformed", 2
	case errors.Is(err, context.Canceled):
		return StatusError, "signal", 2
	}
	return StatusError, "internal", 2
}

// NotStarted is the result of a run that ended before it began: a flag that does not parse, a
// setting out of range, a role with no routing, a task over the budget. It has the shape of every
// run's result, so a caller of --json reads one object whatever happened; no request was sent and
// no journal was opened. code is the exit code the caller already decided (1 a refusal, 2 could
// not run); the error's own kind is kept when it agrees with that code.
func NotStarted(mode, model, routing string, code int, err error) *Result {
	status, kind, classified := Classify(err)
	switch {
	case err == nil:
		err = errors.New("stopped before the run began")
		fallthrough
	case classified != code || status == StatusOK || kind == "internal":
		status, kind = StatusError, KindBadInput
		if code == 1 {
			status, kind = StatusRefused, "refused"
		}
	}
	res := &Result{Status: status, Mode: mode, RunID: NewRunID(time.Now()), Spend: "$0.00", ExitCode: code,
		Error: errorInfo(kind, err)}
	if model != "" {
		res.Model = &model
	}
	if routing != "" {
		res.Routing = &routing
	}
	return res
}

// VerifyWroteError is a verify that changed the files it judges where its verdict could then not
// stand for the run's own change: on the tree before any change (a formatter run with -w, a
// generator, a test that rewrites its fixture), so whatever it says of an edit is said of its own
// bytes; or, in an agent's worktree, in a way locum could not undo. Exit 2.
type VerifyWroteError struct {
	Command string
	Files   []string
	// Before says it was the baseline's run, on the unchanged tree.
	Before bool
	// Restored says the files were put back as they were.
	Restored bool
}

func (e *VerifyWroteError) Error() string {
	files := untrusted.Escape(strings.Join(e.Files, ", "))
	if files == "" {
		files = "the tree"
	}
	if !e.Before {
		return fmt.Sprintf("the verify command `%s` changed %s, and it could not all be put back as it was before the verify ran; nothing was committed", untrusted.Escape(e.Command), files)
	}
	msg := fmt.Sprintf("the verify command `%s` changed %s on the tree before any change, so it cannot judge an edit: it would judge its own bytes, not the model's", untrusted.Escape(e.Command), files)
	if e.Restored {
		msg += fmt.Sprintf("; %s was restored and nothing was sent to the model", files)
	} else {
		msg += "; nothing was sent to the model"
	}
	return msg + ". Give a verify that only reads what it judges"
}

// NoVerdictError is a verify command that exited with something other than 0 or 1, was missing,
// timed out or was ended by a signal: no verdict, so the file is restored and the run exits 2.
type NoVerdictError struct {
	Command string
	Verdict string
	Tail    string
	// Before says it was the baseline's run, before any change and any request.
	Before bool
}

func (e *NoVerdictError) Error() string {
	msg := fmt.Sprintf("the verify command gave no verdict (%s): only exit 0 (keep) or 1 (retry) is a verdict; the file was restored", e.Verdict)
	if e.Before {
		msg = fmt.Sprintf("the verify command gave no verdict on the tree before any change (%s): only exit 0 or 1 is a verdict; nothing was sent to the model", e.Verdict)
	}
	if e.Tail != "" {
		msg += "\n" + indent(lastLines(e.Tail, 10))
	}
	return msg
}

// IndentTail is the last n lines of s, indented to stand under a message: how a verify's output
// is quoted in a verdict.
func IndentTail(s string, n int) string { return indent(lastLines(s, n)) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// OversizeError names every entry over the per-file budget: a refusal before any request.
type OversizeError struct {
	Limit int64
	Files []string // "name (N bytes)"
}

func (e *OversizeError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the budget setting named by name.
func (e *OversizeError) Words(name func(string) string) string {
	return fmt.Sprintf("%d %s over the per-file input budget of %d bytes (%s), so nothing was sent: %s; nothing is truncated, so raise %s only as far as the embedding model's context holds, or split the files",
		len(e.Files), client.Plural(len(e.Files), "file is", "files are"), e.Limit, name("max_input_bytes"), strings.Join(e.Files, ", "), name("max_input_bytes"))
}
