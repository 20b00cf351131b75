// Command packschema writes spec/pack-settings.schema.json, the settings part of the pack
// contract's schema, from the settings table in package packs and the modes' registrations:
// `go generate ./...` runs it in spec/. The file is generated so that a setting's key, type,
// bounds and documentation are written once, in Go, and the schema editors and `packs validate`
// read can never disagree with the resolver.
package main

import (
	"fmt"
	"os"

	"github.com/locumdev/locum/packs"

	// Every mode of the pack contract, registered as the binary registers it.
	_ "github.com/locumdev/locum/evals"
	_ "github.com/locumdev/locum/runner/agent"
	_ "github.com/locumdev/locum/runner/dedup"
	_ "github.com/locumdev/locum/runner/summarize"
	_ "github.com/locumdev/locum/runner/transform"
	_ "github.com/locumdev/locum/runner/verifycheck"
	_ "github.com/locumdev/locum/workflow"
)

func main() {
	data, err := packs.SettingsSchema()
	if err == nil {
		err = os.WriteFile(packs.SettingsSchemaFile, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "packschema: %v\n", err)
		os.Exit(1)
	}
}
