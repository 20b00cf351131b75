package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/runner/engine"
)

// The modes a host calls (transform, summarize, dedup) keep one contract on every path: stderr
// ends with the receipt line, and with --json stdout holds exactly one result object, also when
// the run never began (a flag that does not parse, a setting out of range, a role refusal).

// machineAction wraps a mode's action so that an error before the run still ends in a receipt.
func (e *env) machineAction(action cli.ActionFunc) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		return e.settle(cmd, action(ctx, cmd))
	}
}

// machineUsageError is a mode's OnUsageError: a flag that does not parse is a run that never began.
func (e *env) machineUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	return e.settle(cmd, &usageError{cmd: cmd, err: flagError(err)})
}

// settle prints the error of a run that never began, then its receipt and, with --json, its
// result object. An error that already carries its receipt passes through.
func (e *env) settle(cmd *cli.Command, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.receipted {
		return err
	}
	code := e.exitCode(err)
	cause := err
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		cause = &engine.BadInputError{Reason: ue.err.Error()}
	case errors.As(err, &ee):
		cause = ee.err
	}
	// A command that is no mode looks up as the zero Mode, which asks no chat model.
	m, _ := engine.LookupMode(cmd.Name)
	call := job.Call{Model: cmd.String("model"), RoleGiven: cmd.IsSet("role")}
	res := engine.NotStarted(cmd.Name, call.Model, job.Operator{}.NamedRouting(m, call), code, cause)
	res.Error.Message = trimPrefixes(res.Error.Message, cmd.FullName()+": ", "locum: ")
	fmt.Fprintln(e.stderr, res.ShortReceipt())
	if e.wantsJSON(cmd) {
		data, merr := json.Marshal(res)
		if merr != nil {
			return merr
		}
		fmt.Fprintf(e.stdout, "%s\n", data)
	}
	return &exitError{code: code, err: errors.New(""), receipted: true}
}

// wantsJSON reads --json from the parsed flags, or from the command line as given when parsing
// stopped before reaching it (--max-attempts abc --json).
func (e *env) wantsJSON(cmd *cli.Command) bool {
	if cmd.Bool("json") {
		return true
	}
	for _, a := range e.args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

func trimPrefixes(s string, prefixes ...string) string {
	for _, p := range prefixes {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
