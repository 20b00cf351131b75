// Command packschema writes the parts of the pack contract that are made from locum's own
// declarations: spec/pack-settings.schema.json (each mode's settings, from the settings table in
// package packs and the modes' registrations), spec/pack-steps.schema.json (a workflow step's
// mode and the inputs each mode's step takes, from the registrations) and the table of those
// inputs in spec/pack.md. `go generate ./...` runs it in spec/. The files are generated so that a
// setting's key, type, bounds and documentation, and a step input's key and documentation, are
// written once, in Go, and the schema editors and `packs validate` read can never disagree with
// the resolver or the workflow.
package main

import (
	"fmt"
	"os"

	// Every mode of the pack contract, registered as the binary registers it.
	_ "github.com/locumdev/locum/bench"
	_ "github.com/locumdev/locum/evals"
	_ "github.com/locumdev/locum/runner/agent"
	_ "github.com/locumdev/locum/runner/dedup"
	_ "github.com/locumdev/locum/runner/handoff"
	_ "github.com/locumdev/locum/runner/summarize"
	_ "github.com/locumdev/locum/runner/transform"
	_ "github.com/locumdev/locum/runner/verifycheck"
	_ "github.com/locumdev/locum/workflow"
)

func main() {
	files, err := generated(".")
	for i := 0; err == nil && i < len(files); i++ {
		err = os.WriteFile(files[i].name, files[i].data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "packschema: %v\n", err)
		os.Exit(1)
	}
}
