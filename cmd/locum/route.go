package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/routing"
	"github.com/locumdev/locum/runner/engine"
)

// chooseModel picks the model a mode runs, through the one rule in routing.Choose.
func (e *env) chooseModel(ctx context.Context, cmd *cli.Command, c *packs.Composition, settings *packs.Settings) (model, how string, err error) {
	v, err := e.schemas()
	if err != nil {
		return "", "", err
	}
	model, how, err = routing.Choose(ctx, v, c, settings, routing.Choice{Model: cmd.String("model"), RoleGiven: cmd.IsSet("role")})
	return model, how, routeError(cmd, err)
}

// chooseModelForRole resolves a role through its earned routing.
func (e *env) chooseModelForRole(ctx context.Context, cmd *cli.Command, c *packs.Composition, roleName string, settings *packs.Settings) (model, how string, err error) {
	v, err := e.schemas()
	if err != nil {
		return "", "", err
	}
	model, how, err = routing.ForRole(ctx, v, c, roleName, routing.Choice{Model: cmd.String("model")}, settings)
	return model, how, routeError(cmd, err)
}

// routeError gives a routing refusal or contradiction its exit code before any run starts.
func routeError(cmd *cli.Command, err error) error {
	if err == nil {
		return nil
	}
	_, _, code := engine.Classify(err)
	return withCode(code, fmt.Errorf("%s: %w", cmd.FullName(), err))
}

// chatRun is what every chat mode starts from: the working directory, the composition, and a run
// spec with the mode's settings and the model chosen.
func (e *env) chatRun(ctx context.Context, cmd *cli.Command, mode string) (engine.RunSpec, *packs.Composition, string, error) {
	wd, err := e.getwd()
	if err != nil {
		return engine.RunSpec{}, nil, "", err
	}
	_, c, err := e.workspace()
	if err != nil {
		return engine.RunSpec{}, nil, "", err
	}
	settings, err := e.resolve(cmd, c, mode)
	if err != nil {
		return engine.RunSpec{}, nil, "", err
	}
	model, routing, err := e.chooseModel(ctx, cmd, c, settings)
	if err != nil {
		return engine.RunSpec{}, nil, "", err
	}
	spec := engine.RunSpec{
		Mode: mode, Root: c.Root, Settings: settings, Model: model, Routing: routing,
		JournalPath: cmd.String("journal"), Args: cmd.Args().Slice(), Version: version(), Stderr: e.stderr,
	}
	spec.Observer = e.observer(cmd)
	if mode == "agent" && e.stderrIsTerminal() {
		// The agent narrates a line per tool call on a terminal, written above the live line.
		spec.Progress = logAboveProgress{e}
	}
	return spec, c, wd, nil
}
