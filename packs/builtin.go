// Package packs finds, validates and composes the packs of a workspace, and resolves the settings
// every mode runs with. The packs locum ships are data in this folder, embedded in the binary.
package packs

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed all:tools
var builtinFS embed.FS

// DefaultPack is composed alone when a workspace names no packs.
const DefaultPack = "tools/local-llm"

// defaultPack is the default pack as loaded, once: it is embedded, so it never changes.
var defaultPack = sync.OnceValues(func() (*Pack, error) { return LoadBuiltin(DefaultPack) })

// BuiltinDefaults are the values the settings of mode ("" for those every command shares) take
// where the default pack is composed alone and nothing else sets them: no workspace, user config,
// environment or flag. They are the defaults a command's help shows, keyed by setting; a setting
// with no value is left out. A mode the default pack does not declare has the table's defaults.
func BuiltinDefaults(mode string) (map[string]string, error) {
	p, err := defaultPack()
	if err != nil {
		return nil, fmt.Errorf("the default pack: %w", err)
	}
	c := &Composition{Packs: []*Pack{p}}
	out := map[string]string{}
	if mode != "" && !c.Declares(mode) {
		for _, s := range keySpecs {
			if s.def != "" && s.appliesTo(mode) {
				out[s.key.name] = s.def
			}
		}
		return out, nil
	}
	set, err := c.Resolve(mode, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the default pack's settings of %q: %w", mode, err)
	}
	for _, it := range set.All() {
		if it.Value != "" {
			out[it.Key] = it.Value
		}
	}
	return out, nil
}

// Modes are the pack contract's own modes: those the default pack declares, in its order, which
// is the order every list of modes keeps. The contract's schema checks their settings; a pack may
// declare another mode too, one registered with RegisterMode.
var Modes = defaultPackModes()

func defaultPackModes() []string {
	data, err := builtinFS.ReadFile(DefaultPack + "/pack.json")
	if err != nil {
		panic(fmt.Sprintf("packs: the default pack: %v", err))
	}
	var m struct {
		Contributes struct {
			Modes objectKeys `json:"modes"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		panic(fmt.Sprintf("packs: the default pack's modes: %v", err))
	}
	return m.Contributes.Modes
}

// objectKeys are a JSON object's keys in the order it writes them.
type objectKeys []string

func (k *objectKeys) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		*k = append(*k, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}
