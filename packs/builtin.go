// Package packs finds, validates and composes the packs of a workspace, and resolves the settings
// every mode runs with. The packs locum ships are data in this folder, embedded in the binary.
package packs

import "embed"

//go:embed all:tools
var builtinFS embed.FS

// DefaultPack is composed alone when a workspace names no packs.
const DefaultPack = "tools/local-llm"
