package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/routing"
	"github.com/locumdev/locum/runner/engine"
)

// chooseModelForRole resolves a role through its earned routing.
func (e *env) chooseModelForRole(ctx context.Context, cmd *cli.Command, c *packs.Composition, roleName string, settings *packs.Settings) (model, how string, err error) {
	v, err := e.schemas()
	if err != nil {
		return "", "", err
	}
	model, how, err = routing.ForRole(ctx, v, c, roleName, routing.Choice{Model: cmd.String("model")}, settings)
	return model, how, jobError(cmd, err)
}

// jobs is the job layer for a command in the working directory, flags the operator's setting
// flags the command was given (keyed as packs.Composition.Resolve takes them).
func (e *env) jobs(flags map[string]string) (*job.Layer, error) {
	wd, err := e.getwd()
	if err != nil {
		return nil, err
	}
	v, err := e.schemas()
	if err != nil {
		return nil, err
	}
	l, err := job.New(job.Operator{Dir: wd, Env: e.lookup, Flags: flags, Version: version(), Stderr: e.stderr}, v)
	if err != nil {
		return nil, withCode(exitCouldNot, err)
	}
	return l, nil
}

// prepare hands a mode's command to the job layer, as the MCP server does: the workspace, the
// settings with the command's flags last, and the model. A refusal or a bad setting is an error
// with its exit code, before any run starts.
func (e *env) prepare(ctx context.Context, cmd *cli.Command, mode engine.Mode) (*job.Prepared, error) {
	jobs, err := e.jobs(setFlags(cmd, mode.Name))
	if err != nil {
		return nil, err
	}
	call := job.Call{Model: cmd.String("model"), RoleGiven: cmd.IsSet("role"), JournalPath: cmd.String("journal"),
		Argv: cmd.Args().Slice(), Observer: e.observer(cmd)}
	if e.stderrIsTerminal() {
		// A mode that narrates a line per step (the agent's per tool call) writes it above the
		// live line.
		call.Progress = logAboveProgress{e}
	}
	p, err := jobs.Prepare(ctx, mode, call)
	return p, jobError(cmd, err)
}

// runJob runs a prepared job; a refusal before the run is an error with its exit code. extra is
// what the command prints beside the outcome and the receipt (nil: nothing); the run's
// host-cost estimate counts it with the rest of what the command prints.
func (e *env) runJob(ctx context.Context, cmd *cli.Command, p *job.Prepared, j engine.Job, extra output) (*engine.Result, error) {
	p.SetHost(&engine.HostSide{CallBytes: int64(len(shellLine(e.args))), ResultBytes: func(res *engine.Result) int64 {
		var n countingWriter
		_ = e.render(cmd, res, extra, &n, &n)
		return n.n
	}})
	res, err := p.Run(ctx, j)
	return res, jobError(cmd, err)
}

// jobError gives an error of the job layer or of the model choice, a refusal or a contradiction
// before any run starts, the exit code engine.Classify decides on, the command's name before it.
func jobError(cmd *cli.Command, err error) error {
	if err == nil {
		return nil
	}
	_, _, code := engine.Classify(err)
	return withCode(code, fmt.Errorf("%s: %w", cmd.FullName(), err))
}
