// Package packs finds, validates and composes the packs of a workspace, and resolves the settings
// every mode runs with. The packs locum ships are data in this folder, embedded in the binary.
package packs

import (
	"embed"
	"io/fs"
)

//go:embed all:tools
var builtinFS embed.FS

// Builtin returns the packs shipped inside the binary as a file system rooted at the folder that
// holds the categories (tools/local-llm/pack.json and so on).
func Builtin() fs.FS { return builtinFS }

// DefaultPack is composed alone when a workspace names no packs.
const DefaultPack = "tools/local-llm"
