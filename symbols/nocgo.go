//go:build !cgo

package symbols

import (
	"path/filepath"
	"strings"
)

// CgoBuild says this build parses the tree-sitter languages: it does not.
const CgoBuild = false

// treeDecls refuses a tree-sitter language: its parsers are C, which a build without cgo lacks.
func treeDecls(lang *Language, name string, _ []byte) ([]Decl, error) {
	return nil, &NoCgoError{Language: lang.Name, Ext: strings.ToLower(filepath.Ext(name))}
}
