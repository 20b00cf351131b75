package mcp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// A tool's input schema is made when the server starts: the tool's own arguments (what to work
// on), then the settings a call may set, each stated from its one declaration in packs, by the
// name of its flag in snake_case. A setting's property carries its JSON type, and in a few words
// its values, bounds or form where the type does not say them; the settings' documentation is
// `locum help settings`, which a host reads only when it needs it, not on every turn. The
// property validates the type alone: the bounds are the resolver's, which refuses a value with
// the same words for a call as for a flag or a file.

// modelArg is a chat tool's model: a route, which a call names only where the operator allows it.
var modelArg = engine.ToolArg{Name: "model", Doc: "only a model the person named"}

// callSettings are the settings of mode a call may set: every setting the mode takes but the
// operator's own, and those every mode takes (the endpoint, the deadline of a request, the input
// budget) only where the mode asks a model. "" is the settings every command shares.
func callSettings(mode engine.Mode) []packs.FlagSpec {
	perMode := map[string]bool{}
	for _, k := range packs.PerModeSettings() {
		perMode[k.String()] = true
	}
	var out []packs.FlagSpec
	for _, f := range packs.SettingFlags(mode.Name) {
		if f.OperatorOnly || mode.Name != "" && mode.Model == engine.NoModel && !perMode[f.Key] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// argOf is the argument a call sets a setting with: its flag in snake_case.
func argOf(f packs.FlagSpec) string { return strings.ReplaceAll(f.Name, "-", "_") }

// inputSchema is a tool's input schema: its own arguments, then its settings. No other argument
// is taken.
func inputSchema(own []engine.ToolArg, settings []packs.FlagSpec) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	add := func(name string, p *jsonschema.Schema) {
		if _, dup := s.Properties[name]; dup {
			panic(fmt.Sprintf("mcp: two arguments named %s", name))
		}
		s.Properties[name] = p
		s.PropertyOrder = append(s.PropertyOrder, name)
	}
	for _, a := range own {
		typ := "string"
		if a.Bool {
			typ = "boolean"
		}
		add(a.Name, &jsonschema.Schema{Type: typ, Description: a.Doc})
		if a.Required {
			s.Required = append(s.Required, a.Name)
		}
	}
	for _, f := range settings {
		form := f.Form()
		add(argOf(f), &jsonschema.Schema{Type: form.Type, Description: formWords(form)})
	}
	return s
}

// formWords say what a setting's type does not: its values, bounds or form; "" for nothing.
func formWords(f packs.Form) string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch {
	case len(f.Values) > 1:
		return strings.Join(f.Values[:len(f.Values)-1], ", ") + " or " + f.Values[len(f.Values)-1]
	case f.Bounded:
		return num(f.Min) + " to " + num(f.Max)
	case f.Duration && f.OrZero:
		return "such as 2m; 0 for none"
	case f.Duration:
		return "such as 10m"
	}
	return ""
}

// callArgs are the settings a call's arguments set, keyed by setting, as the job layer resolves
// them on top of the operator's: text as it is, a number or true and false as a flag gives them.
func callArgs(settings []packs.FlagSpec, args engine.ToolArgs) map[string]string {
	out := map[string]string{}
	for _, f := range settings {
		switch v := args[argOf(f)].(type) {
		case string:
			out[f.Key] = v
		case float64:
			out[f.Key] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			out[f.Key] = strconv.FormatBool(v)
		}
	}
	return out
}
