package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/packs"
)

// output is a file the generator writes in spec/ and what it holds.
type output struct {
	name string
	data []byte
}

// packNote is the Markdown note of the pack contract, whose table of step inputs is generated.
const packNote = "pack.md"

// The lines around the generated table of step inputs in packNote; the rest of the note is
// written by hand.
const (
	beginInputs = "<!-- Generated from the modes' registrations by `go generate ./...`: edit a mode's StepInputs, not this table. -->\n"
	endInputs   = "<!-- End of the generated table. -->\n"
)

// generated are the files the generator writes in the folder spec (spec/ itself): the schemas
// whole, and packNote as it is there with its table of step inputs made anew.
func generated(spec string) ([]output, error) {
	settings, err := packs.SettingsSchema()
	if err != nil {
		return nil, err
	}
	steps, err := packs.StepsSchema()
	if err != nil {
		return nil, err
	}
	note, err := os.ReadFile(filepath.Join(spec, packNote))
	if err != nil {
		return nil, err
	}
	table, err := stepInputsTable()
	if err != nil {
		return nil, err
	}
	note, err = splice(note, table)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", packNote, err)
	}
	return []output{{packs.SettingsSchemaFile, settings}, {packs.StepsSchemaFile, steps}, {packNote, note}}, nil
}

// stepInputsTable lists each input of each contract mode a step runs, in the modes' order and
// each mode's own.
func stepInputsTable() (string, error) {
	modes, err := packs.ContractStepModes()
	if err != nil {
		return "", err
	}
	cell := strings.NewReplacer("|", `\|`, "\n", " ")
	var b strings.Builder
	b.WriteString("| mode | `with` key | what it is | when the step does not give it |\n| --- | --- | --- | --- |\n")
	for _, mode := range modes {
		for _, in := range packs.StepInputs(mode) {
			def := in.Default()
			if def == "" {
				def = "none"
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", mode, in.Name, cell.Replace(in.Doc), cell.Replace(def))
		}
	}
	return b.String(), nil
}

// splice puts table between the note's begin and end lines in place of what was there.
func splice(note []byte, table string) ([]byte, error) {
	start := bytes.Index(note, []byte(beginInputs))
	end := bytes.Index(note, []byte(endInputs))
	if start < 0 || end < start {
		return nil, fmt.Errorf("no table of step inputs between the lines %q and %q: put them back where it goes", strings.TrimSpace(beginInputs), strings.TrimSpace(endInputs))
	}
	var out bytes.Buffer
	out.Write(note[:start+len(beginInputs)])
	out.WriteString(table)
	out.Write(note[end:])
	return out.Bytes(), nil
}
