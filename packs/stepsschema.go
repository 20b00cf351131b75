package packs

import (
	"bytes"
	"fmt"
	"strings"
)

// StepsSchemaFile is the schema, in package spec, of a workflow step's mode and the inputs its
// `with` gives each mode. It is written from the modes' registrations by StepsSchema (`go
// generate ./...`), so that which keys a mode's step takes and what each is are declared once,
// in the mode's package; pack.schema.json refers to it.
const StepsSchemaFile = "pack-steps.schema.json"

// ContractStepModes are the contract's own modes a workflow step runs, in the order of Modes.
// Every contract mode must be registered: the program that writes the schema links them all.
func ContractStepModes() ([]string, error) {
	var out []string
	for _, mode := range Modes {
		m, ok := registeredMode(mode)
		if !ok {
			return nil, fmt.Errorf("mode %q of the pack contract is not registered: link the package that registers it", mode)
		}
		if m.Step {
			out = append(out, mode)
		}
	}
	return out, nil
}

// StepsSchema is StepsSchemaFile's content: `$defs/mode`, a step's mode, and `$defs/inputs`, for
// each contract mode a step runs, the keys its `with` may give, each with its documentation. A
// step of a mode outside the contract's own is checked in Go (workflowProblems), against the
// inputs that mode registers.
func StepsSchema() ([]byte, error) {
	modes, err := ContractStepModes()
	if err != nil {
		return nil, err
	}
	var conditions []any
	for _, mode := range modes {
		// Each key a property of its own, so an editor shows its documentation, and no other:
		// the library reports an unknown property where it stands, which it does not do for a
		// key refused by propertyNames.
		var props object
		for _, in := range StepInputs(mode) {
			props = append(props, field{in.Name, object{{"description", in.Describe()}}})
		}
		conditions = append(conditions, object{
			{"if", object{{"required", []any{"mode"}}, {"properties", object{{"mode", object{{"const", mode}}}}}}},
			{"then", object{{"properties", object{{"with", object{
				{"description", fmt.Sprintf("The inputs of a %s step.", mode)},
				{"properties", props},
				{"additionalProperties", false},
			}}}}}},
		})
	}
	doc := object{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", "https://locum.dev/spec/" + StepsSchemaFile},
		{"$comment", "Generated from the modes' registrations (engine.Mode.StepInputs) by `go generate ./...`: edit a mode's inputs there, not this file."},
		{"title", "locum pack manifest: a workflow step's mode and its inputs"},
		{"$defs", object{
			{"mode", object{
				{"$ref", "pack.schema.json#/$defs/slug"},
				{"description", fmt.Sprintf("A mode a workflow step runs: %s, or another the running locum registers as one; a step of any other is refused when it runs.", strings.Join(modes, ", "))},
			}},
			{"inputs", object{
				{"description", "The keys a step's with may give its mode, by mode."},
				{"allOf", conditions},
			}},
		}},
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, doc, ""); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// Describe is the input's documentation and, where it has one, what it takes when the step's
// `with` does not give it.
func (in StepInput) Describe() string {
	if d := in.Default(); d != "" {
		return in.Doc + "; when not given, " + d
	}
	return in.Doc
}
