package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner"
	"github.com/locumdev/locum/schema"
)

// chooseModel picks the model a mode runs: --model alone is an operator's explicit choice
// (routing=operator); a role (--role, or the mode's default) runs only the model and effort a
// signed A/B record earned it (routing=earned), and a different --model or effort is refused
// rather than silently substituted.
func (e *env) chooseModel(cmd *cli.Command, c *packs.Composition, settings *packs.Settings) (model, routing string, err error) {
	role, _ := settings.Get("role")
	explicit := cmd.String("model")
	if explicit != "" && !cmd.IsSet("role") {
		return explicit, "operator", nil
	}
	if role.Value == "" {
		return "", "", withCode(exitRed, errors.New("locum: no model: name one with --model ID, or route a role earned by a signed A/B record (--role)"))
	}
	return e.chooseModelForRole(cmd, c, role.Value, settings)
}

// chooseModelForRole resolves a role through its earned routing.
func (e *env) chooseModelForRole(cmd *cli.Command, c *packs.Composition, roleName string, settings *packs.Settings) (model, routing string, err error) {
	role := packs.Setting{Key: "role", Value: roleName}
	explicit := cmd.String("model")
	var trust []string
	if c.Workspace != nil {
		trust = c.Workspace.Trust.Keys
	}
	v, err := schema.New()
	if err != nil {
		return "", "", err
	}
	route, err := evals.ResolveRole(v, c.Root, trust, role.Value, c.Roles()[role.Value])
	var refusal *runner.RefusalError
	if errors.As(err, &refusal) {
		// No earned routing: a model the operator accepted for the role in the user config may
		// stand in, and the receipt says so (routing=operator, never earned).
		if accepted, ok := c.AcceptedRole(role.Value); ok && (explicit == "" || explicit == accepted.Model) {
			if accepted.Effort != "" {
				if effort, ok := settings.Get("effort"); ok && effort.Value != accepted.Effort && (strings.HasPrefix(effort.Source, "flag") || strings.HasPrefix(effort.Source, "env")) {
					return "", "", withCode(exitCouldNot, fmt.Errorf("locum: --role %s is accepted in %s at effort %s; %s %s contradicts it", role.Value, c.User.File, accepted.Effort, effort.Source, effort.Value))
				}
				settings.Set("effort", accepted.Effort, "user config "+c.User.File)
			}
			return accepted.Model, "operator", nil
		}
	}
	if explicit != "" && (err != nil || explicit != route.Model) {
		measured := "no earned model"
		if err == nil {
			measured = "only " + route.Model + ", the model its A/B record measured"
		}
		return "", "", withCode(exitCouldNot, fmt.Errorf("locum: --role %s and --model %s: the role runs %s, never a substitute; drop --role to run %s as an operator's choice", role.Value, explicit, measured, explicit))
	}
	if err != nil {
		if refusal != nil {
			return "", "", withCode(exitRed, fmt.Errorf("locum: %w", err))
		}
		return "", "", err
	}
	if effort, ok := settings.Get("effort"); ok && effort.Value != route.Effort {
		if strings.HasPrefix(effort.Source, "flag") || strings.HasPrefix(effort.Source, "env") {
			return "", "", withCode(exitCouldNot, fmt.Errorf("locum: --role %s was measured at effort %s; %s %s would run it unmeasured. Drop it, or use --model to run a candidate", role.Value, route.Effort, effort.Source, effort.Value))
		}
		settings.Set("effort", route.Effort, "routing "+evals.RoutingFile)
	}
	return route.Model, "earned", nil
}

// chatRun is what every chat mode starts from: the working directory, the composition, and a run
// spec with the mode's settings and the model chosen.
func (e *env) chatRun(cmd *cli.Command, mode string) (runner.RunSpec, *packs.Composition, string, error) {
	wd, err := e.getwd()
	if err != nil {
		return runner.RunSpec{}, nil, "", err
	}
	_, c, err := e.workspace()
	if err != nil {
		return runner.RunSpec{}, nil, "", err
	}
	settings, err := e.resolve(cmd, c, mode)
	if err != nil {
		return runner.RunSpec{}, nil, "", err
	}
	model, routing, err := e.chooseModel(cmd, c, settings)
	if err != nil {
		return runner.RunSpec{}, nil, "", err
	}
	return runner.RunSpec{
		Mode: mode, Root: c.Root, Settings: settings, Model: model, Routing: routing,
		JournalPath: cmd.String("journal"), Args: cmd.Args().Slice(), Version: version(), Stderr: e.stderr,
		Progress: e.progress(),
	}, c, wd, nil
}
