package packs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// SettingsSchemaFile is the schema, in package spec, of the settings a pack or the workspace
// gives each mode. It is written from the settings table and the modes' registrations by
// SettingsSchema (`go generate ./...`), so that what a setting is, its bounds and its
// documentation are declared once, in Go; pack.schema.json and workspace.schema.json refer to it.
const SettingsSchemaFile = "pack-settings.schema.json"

// durationPattern is a Go duration as the schema can match it: one or more numbers, each with a
// unit.
const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// SettingsSchema is SettingsSchemaFile's content: `$defs/modes` (the contract's modes, each by
// name, and any other registered mode's settings checked in Go), `$defs/MODE` for each contract
// mode (each setting it takes that a repository's file may set: its JSON type, bounds and
// documentation) and the value shapes they share. Every contract mode must be registered: the
// program that writes it links them all.
func SettingsSchema() ([]byte, error) {
	var modeRefs object
	for _, mode := range Modes {
		if !Registered(mode) {
			return nil, fmt.Errorf("mode %q of the pack contract is not registered: link the package that registers it", mode)
		}
		modeRefs = append(modeRefs, field{mode, object{{"$ref", "#/$defs/" + mode}}})
	}
	defs := object{
		{"modes", object{
			{"type", "object"},
			{"description", "Settings by mode: the contract's own modes here, and any mode a locum build registers, whose keys and values locum checks against the settings that mode takes."},
			{"propertyNames", object{{"$ref", "pack.schema.json#/$defs/slug"}}},
			{"additionalProperties", object{{"$ref", "#/$defs/registeredMode"}}},
			{"properties", modeRefs},
		}},
		{"registeredMode", object{
			{"description", "The settings of a mode outside the contract's own, by key: locum refuses a mode it does not register, and a key or value that mode does not take."},
			{"type", "object"},
			{"additionalProperties", object{{"type", []any{"string", "integer", "number", "boolean"}}}},
		}},
	}
	for _, mode := range Modes {
		var props object
		for _, s := range keySpecs {
			// A setting every command shares comes from the operator or the workspace's
			// endpoint, never from a mode's settings in a file.
			if s.global || !s.appliesTo(mode) {
				continue
			}
			props = append(props, field{s.key.name, append(s.valueSchema(), field{"description", s.doc})})
		}
		defs = append(defs, field{mode, object{
			{"type", "object"},
			{"description", fmt.Sprintf("The settings a pack or the workspace gives mode %s.", mode)},
			{"additionalProperties", false},
			{"properties", props},
		}})
	}
	defs = append(defs,
		field{"duration", object{
			{"description", "A Go duration such as 90s, 10m or 1h30m."},
			{"type", "string"},
			{"pattern", durationPattern},
		}},
		field{"effort", object{{"enum", enumValues(kindEffort)}}},
	)
	doc := object{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", "https://locum.dev/spec/" + SettingsSchemaFile},
		{"$comment", "Generated from packs/settings.go by `go generate ./...`: edit the settings table there, not this file."},
		{"title", "locum pack manifest: the settings of each mode"},
		{"$defs", defs},
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, doc, ""); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// valueSchema is the schema of a value of the setting, as a file writes it.
func (s keySpec) valueSchema() object {
	if _, ok := kindValues[s.kind]; ok {
		return object{{"enum", enumValues(s.kind)}}
	}
	switch s.kind {
	case kindCount, kindCountOrZero:
		o := object{{"type", "integer"}, {"minimum", 1}}
		if s.kind == kindCountOrZero {
			o[1].value = 0
		}
		if s.max > 0 {
			o = append(o, field{"maximum", s.max})
		}
		return o
	case kindCosine:
		return object{{"type", "number"}, {"minimum", -1}, {"maximum", 1}}
	case kindPrice:
		return object{{"type", "number"}, {"minimum", 0}}
	case kindRatio:
		return object{{"type", "number"}, {"exclusiveMinimum", 0}}
	case kindDuration, kindDurationOrZero:
		return object{{"$ref", "#/$defs/duration"}}
	case kindBool:
		return object{{"type", "boolean"}}
	case kindSlug:
		return object{{"$ref", "pack.schema.json#/$defs/slug"}}
	}
	return object{{"type", "string"}, {"minLength", 1}}
}

// enumValues are the kind's values as JSON: true and false as booleans, as a file writes them.
func enumValues(k valueKind) []any {
	var out []any
	for _, v := range kindValues[k] {
		switch v {
		case "true", "false":
			out = append(out, v == "true")
		default:
			out = append(out, v)
		}
	}
	return out
}

// object is a JSON object whose keys keep the order they are written in.
type object []field

type field struct {
	key   string
	value any
}

// writeJSON writes v indented by two spaces a level, as the hand-written schemas are, with no
// HTML escaping (a schema is no web page).
func writeJSON(buf *bytes.Buffer, v any, indent string) error {
	inner := indent + "  "
	switch v := v.(type) {
	case object:
		if len(v) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteString("{\n")
		for i, f := range v {
			buf.WriteString(inner)
			if err := writeScalar(buf, f.key); err != nil {
				return err
			}
			buf.WriteString(": ")
			if err := writeJSON(buf, f.value, inner); err != nil {
				return err
			}
			if i < len(v)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteString("[\n")
		for i, e := range v {
			buf.WriteString(inner)
			if err := writeJSON(buf, e, inner); err != nil {
				return err
			}
			if i < len(v)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "]")
	default:
		return writeScalar(buf, v)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.WriteString(strings.TrimSuffix(b.String(), "\n"))
	return nil
}
