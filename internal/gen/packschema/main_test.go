package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/spec"
)

// The committed settings schema is what the generator writes from the table and the modes'
// registrations today.
func TestCommittedSettingsSchemaIsGenerated(t *testing.T) {
	want, err := packs.SettingsSchema()
	require.NoError(t, err)
	got, err := spec.FS.ReadFile(packs.SettingsSchemaFile)
	require.NoError(t, err, "spec/%s: run `go generate ./...`", packs.SettingsSchemaFile)
	if !bytes.Equal(got, want) {
		t.Fatalf("spec/%s is not what the settings table and the modes' registrations give: run `go generate ./...`", packs.SettingsSchemaFile)
	}
}
