// Package routing decides which model a chat run uses and why: the operator's explicit choice, a
// role's routing earned by a signed A/B record, or a model the operator accepted for the role.
// evals measures and keeps the records' trust chain; this package only reads them.
package routing

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// Choice is what a caller asked for: an explicit model, a role, or both. RoleGiven says the
// role was named by the caller, not inherited from a pack's default.
type Choice struct {
	Model     string
	RoleGiven bool
	// Arg names a setting as the caller takes it, for the messages: "--model" on the command line
	// (nil gives that), "`model`" for a tool call.
	Arg func(name string) string
}

// Operator says the caller names the model itself, with no role: the operator's explicit choice
// (routing=operator), wherever the caller may make one.
func (ch Choice) Operator() bool { return ch.Model != "" && !ch.RoleGiven }

func (ch Choice) arg(name string) string {
	if ch.Arg == nil {
		return "--" + name
	}
	return ch.Arg(name)
}

// Choose picks the model a chat mode runs. A model alone is an operator's explicit choice
// (routing=operator); a role (named, or the mode's default) runs only the model and effort a
// signed A/B record earned it (routing=earned), and a different model or effort is refused rather
// than silently substituted. The CLI and the MCP server both call it, so a role means the same on
// either. A refusal is a *engine.RefusalError (exit 1); a contradiction is a *engine.BadInputError
// (exit 2).
func Choose(ctx context.Context, v *schema.Validator, c *packs.Composition, settings *packs.Settings, ch Choice) (model, routing string, err error) {
	role, _ := settings.Get(packs.RoleSetting)
	if ch.Operator() {
		return ch.Model, "operator", nil
	}
	if role.Value == "" {
		return "", "", &engine.RefusalError{Reason: fmt.Sprintf("no model: name one with %s ID, or name a role (%s) routed by a signed A/B record or accepted with locum roles accept", ch.arg("model"), ch.arg("role"))}
	}
	return ForRole(ctx, v, c, role.Value, ch, settings)
}

// ForRole resolves a role through its earned routing; ch.Model, when set, must be the model
// the role earned. The role's measured effort replaces one from a pack or the workspace, and one
// the caller set on purpose (a flag or the environment) that differs is refused. A role with
// neither routing nor an accepted model is refused with the models the server lists, so the
// person can run the command the refusal names.
func ForRole(ctx context.Context, v *schema.Validator, c *packs.Composition, role string, ch Choice, settings *packs.Settings) (model, routing string, err error) {
	explicit := ch.Model
	route, err := evals.ResolveRoleTrusting(v, c.Root, operatorTrust(c), role, c.Roles()[role])
	var refusal *engine.RefusalError
	if errors.As(err, &refusal) {
		// No earned routing: a model the operator accepted for the role in the user config may
		// stand in, and the receipt says so (routing=operator, never earned).
		if accepted, ok := c.AcceptedRole(role); ok && (explicit == "" || explicit == accepted.Model) {
			if accepted.Effort != "" {
				if effort, ok := settings.Get(packs.Effort); ok && effort.Value != accepted.Effort && effort.SetForRun() {
					return "", "", &engine.BadInputError{Reason: fmt.Sprintf("%s %s is accepted in %s at effort %s; %s %s contradicts it", ch.arg("role"), role, c.User.File, accepted.Effort, effort.Source, effort.Value)}
				}
				settings.Set(packs.Effort, accepted.Effort, "user config "+c.User.File)
			}
			if err := sameWeights(ctx, settings, role, accepted.Model, accepted.Weights, "accepted in your user config"); err != nil {
				return "", "", err
			}
			return accepted.Model, "operator", nil
		}
	}
	if explicit != "" && (err != nil || explicit != route.Model) {
		measured := "no earned model"
		if err == nil {
			measured = "only " + route.Model + ", the model its A/B record measured"
		}
		return "", "", &engine.BadInputError{Reason: fmt.Sprintf("%s %s and %s %s: the role runs %s, never a substitute; drop %s to run %s as an operator's choice",
			ch.arg("role"), role, ch.arg("model"), explicit, measured, ch.arg("role"), explicit)}
	}
	if err != nil {
		return "", "", withServerModels(ctx, settings, err)
	}
	if effort, ok := settings.Get(packs.Effort); ok && effort.Value != route.Effort {
		if effort.SetForRun() {
			return "", "", &engine.BadInputError{Reason: fmt.Sprintf("%s %s was measured at effort %s; %s %s would run it unmeasured. Drop it, or use %s to run a candidate",
				ch.arg("role"), role, route.Effort, effort.Source, effort.Value, ch.arg("model"))}
		}
		settings.Set(packs.Effort, route.Effort, "routing "+evals.RoutingFile)
	}
	if err := sameWeights(ctx, settings, role, route.Model, route.Weights, "earned by its A/B record"); err != nil {
		return "", "", err
	}
	return route.Model, "earned", nil
}

// sameWeights refuses a role whose evidence names weights the server no longer serves under
// the model's name: a re-pulled tag, another file behind an alias. Evidence with no identity of
// the weights (the server gave none) binds to the name alone; a server that cannot be asked is
// left to the run, which says why.
func sameWeights(ctx context.Context, settings *packs.Settings, role, model, recorded, how string) error {
	if recorded == "" {
		return nil
	}
	current, err := engine.IdentifyModel(ctx, settings, model)
	var notListed *engine.ModelNotListedError
	command := fmt.Sprintf("locum roles accept %s %s", role, model)
	switch {
	case errors.As(err, &notListed):
		return &engine.RefusalError{Command: command, Reason: fmt.Sprintf("role %q runs %s, %s with weights `%s`, but %s; screen what it serves with: %s",
			role, untrusted.Escape(model), how, untrusted.Escape(recorded), untrusted.Escape(err.Error()), command)}
	case err != nil:
		return nil
	case current != recorded:
		now := "weights it does not identify"
		if current != "" {
			now = "`" + untrusted.Escape(current) + "`"
		}
		return &engine.RefusalError{Command: command, Reason: fmt.Sprintf("role %q runs %s, %s with weights `%s`; the server now serves %s under that name, which that evidence does not cover; screen the new weights with: %s",
			role, untrusted.Escape(model), how, untrusted.Escape(recorded), now, command)}
	}
	return nil
}

// operatorTrust is the keys whose signed routing earns a role on this machine: only keys the
// operator trusts. The repository's own trust.keys are named in a refusal, never trusted.
func operatorTrust(c *packs.Composition) evals.TrustedKeys {
	trust := evals.TrustedKeys{Keys: c.OperatorKeys(), Where: "your user config (trust_keys)"}
	if c.User != nil {
		trust.Where = "your user config " + c.User.File + " (trust_keys)"
	}
	if c.Workspace != nil {
		trust.Vouched = c.Workspace.Trust.Keys
	}
	return trust
}

// RoleRouting is who may run a role now: earned (a signed, trusted A/B record's routing),
// operator (a model the operator accepted in the user config), or none, with the reason.
type RoleRouting struct {
	Role    string `json:"role"`
	Routing string `json:"routing"`
	Model   string `json:"model,omitempty"`
	Effort  string `json:"effort,omitempty"`
	// Record is the routing file an earned role resolves through.
	Record string `json:"record,omitempty"`
	// Since is when the operator accepted the model, where locum roles accept wrote it.
	Since  string              `json:"since,omitempty"`
	Screen *packs.AcceptScreen `json:"screen,omitempty"`
	// Reason is why a role has no routing.
	Reason string `json:"reason,omitempty"`
}

// RoleStatus says how role resolves now, by the same rule ForRole runs it: earned routing
// first, then the operator's acceptance.
func RoleStatus(v *schema.Validator, c *packs.Composition, role string) RoleRouting {
	route, err := evals.ResolveRoleTrusting(v, c.Root, operatorTrust(c), role, c.Roles()[role])
	if err == nil {
		return RoleRouting{Role: role, Routing: "earned", Model: route.Model, Effort: route.Effort, Record: evals.RoutingFile}
	}
	if accepted, ok := c.AcceptedRole(role); ok {
		return RoleRouting{Role: role, Routing: "operator", Model: accepted.Model, Effort: accepted.Effort, Since: accepted.AcceptedAt, Screen: accepted.Screen}
	}
	return RoleRouting{Role: role, Routing: "none", Reason: err.Error()}
}

// withServerModels adds to a refusal that names the person's command what the server on the
// endpoint lists as chat models, or that none answers there.
func withServerModels(ctx context.Context, settings *packs.Settings, err error) error {
	var refusal *engine.RefusalError
	if !errors.As(err, &refusal) || refusal.Command == "" {
		return err
	}
	models, perr := engine.ChatModels(ctx, settings)
	base, _ := settings.Get(packs.BaseURL)
	out := *refusal
	switch {
	case perr != nil:
		out.Reason += fmt.Sprintf(". The server at %s could not be asked for its models (locum status says why)", untrusted.Escape(base.Value))
	case len(models) == 0:
		out.Reason += fmt.Sprintf(". The server at %s lists no chat model", untrusted.Escape(base.Value))
	default:
		// The names are the server's text: escaped, as everything a server says.
		out.Reason += fmt.Sprintf(". The server at %s lists: %s", untrusted.Escape(base.Value), untrusted.Escape(strings.Join(models, ", ")))
	}
	return &out
}

// RoleModels is the model each role resolves to now, with where from, in the roles' order of
// name; a role with no routing is left out. Status reports them where no chat model is named.
func RoleModels(v *schema.Validator, c *packs.Composition) []engine.RoleModel {
	names := make([]string, 0, len(c.Roles()))
	for role := range c.Roles() {
		names = append(names, role)
	}
	sort.Strings(names)
	var out []engine.RoleModel
	for _, role := range names {
		r := RoleStatus(v, c, role)
		source := ""
		switch r.Routing {
		case "earned":
			source = "earned by the signed A/B record in " + r.Record
		case "operator":
			source = "accepted in your user config " + c.User.File
		default:
			continue
		}
		out = append(out, engine.RoleModel{Role: role, ModelPresence: engine.ModelPresence{ID: r.Model, Source: source}})
	}
	return out
}

// StatusModels are the models a status looks for: the chat model a front end was given, else the
// model each role resolves to; and the embedding model.
func StatusModels(v *schema.Validator, c *packs.Composition, chat, embed *engine.ModelPresence) engine.StatusModels {
	want := engine.StatusModels{Chat: chat, Embed: embed}
	if chat == nil {
		want.Roles = RoleModels(v, c)
	}
	return want
}
