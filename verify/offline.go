package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/locumdev/locum/rails"
)

// Check is one named claim of the rails' contract that can be shown to hold without a model
// server or a network.
type Check struct {
	Name string
	Run  func(ctx context.Context, env *Env) error
}

// Rails are the functions the checks hold to their contract. Tests swap one for a broken copy to
// prove the check that guards it fails.
type Rails struct {
	ParseEndpoint    func(raw string, allowRemote bool) (*url.URL, error)
	CheckDialAddress func(address string) error
}

// DefaultRails are the rails locum runs with.
func DefaultRails() Rails {
	return Rails{ParseEndpoint: rails.ParseEndpoint, CheckDialAddress: rails.CheckDialAddress}
}

// Env is what a check runs with: the rails under test, and a dialer that counts every attempt to
// connect, which fails the check.
type Env struct {
	Rails    Rails
	Dial     rails.DialFunc
	attempts atomic.Int64
	notes    []string
}

// Note keeps a line the check's report prints under its verdict: something true of what it
// checked that changes no verdict. The text must be safe for a terminal.
func (e *Env) Note(text string) { e.notes = append(e.notes, text) }

// CouldNotRunError marks a check that could not reach a verdict (a temporary file that could not
// be written, say), as opposed to a rail that failed.
type CouldNotRunError struct{ Err error }

func (e *CouldNotRunError) Error() string { return "could not run: " + e.Err.Error() }
func (e *CouldNotRunError) Unwrap() error { return e.Err }

// Result is one check's verdict.
type Result struct {
	Name     string
	Err      error
	Duration time.Duration
}

// Report is every check's verdict.
type Report struct{ Results []Result }

// ExitCode folds every check's verdict: 2 when one could not run, else 1 when one is red, else
// 0. It reads them all, so a red or a could-not-run is never hidden by the greens after it.
func (r Report) ExitCode() int {
	switch {
	case r.count(CouldNot) > 0:
		return 2
	case r.count(Red) > 0:
		return 1
	}
	return 0
}

// Offline runs locum's own checks and writes one line per check, then a summary.
func Offline(ctx context.Context, w io.Writer) (Report, error) {
	return RunChecks(ctx, DefaultRails(), OfflineChecks(), w)
}

// OfflineChecks lists the checks of --verify-offline, grouped by rail.
func OfflineChecks() []Check {
	var all []Check
	for _, group := range [][]Check{loopbackChecks(), budgetChecks(), thinkingChecks(), rollbackChecks(), trustChecks(), dedupChecks(), manifestChecks()} {
		all = append(all, group...)
	}
	return all
}

// RunChecks runs each check in order with the given rails and reports it, then a summary line.
// Each check gets a dialer that refuses and counts: a check that tried to connect fails, whatever
// else it found.
func RunChecks(ctx context.Context, r Rails, checks []Check, w io.Writer) (Report, error) {
	rep, err := runChecks(ctx, r, checks, w)
	if err != nil {
		return rep, err
	}
	fmt.Fprintf(w, "verify-offline: %d checks, %d failed\n", len(rep.Results), rep.count(Red)+rep.count(CouldNot))
	return rep, nil
}

// runChecks runs and reports each check, one line each: ok, FAIL (red) or ERROR (could not run),
// its name and duration, and then its notes.
func runChecks(ctx context.Context, r Rails, checks []Check, w io.Writer) (Report, error) {
	var rep Report
	for _, c := range checks {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		start := time.Now()
		env := &Env{Rails: r}
		env.Dial = rails.NoNetworkDialer(&env.attempts)
		err := runCheck(ctx, c, env)
		if n := env.attempts.Load(); n > 0 && err == nil {
			err = fmt.Errorf("it tried to open %d network connections; these checks run with zero network", n)
		}
		res := Result{Name: c.Name, Err: err, Duration: time.Since(start)}
		rep.Results = append(rep.Results, res)
		d := res.Duration.Round(time.Microsecond)
		if err == nil {
			fmt.Fprintf(w, "%s %s (%s)\n", Green, c.Name, d)
		} else {
			fmt.Fprintf(w, "%s %s (%s): %v\n", res.Verdict(), c.Name, d, err)
		}
		for _, n := range env.notes {
			fmt.Fprintf(w, "    note %s\n", n)
		}
	}
	return rep, nil
}

// Verdict is how the check ended: green, red, or could not run.
func (r Result) Verdict() Verdict {
	var cn *CouldNotRunError
	switch {
	case r.Err == nil:
		return Green
	case errors.As(r.Err, &cn):
		return CouldNot
	default:
		return Red
	}
}

// count is how many checks ended with verdict v.
func (r Report) count(v Verdict) int {
	n := 0
	for _, res := range r.Results {
		if res.Verdict() == v {
			n++
		}
	}
	return n
}

// runCheck turns a panic in a check into its failure, so one broken check cannot hide the rest.
func runCheck(ctx context.Context, c Check, env *Env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.Run(ctx, env)
}
