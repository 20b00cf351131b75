package packs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// kindValues are the values a setting of an enumerated kind takes, in the order help and the
// schema list them.
var kindValues = map[valueKind][]string{
	kindEffort:        {"none", "low", "medium", "high"},
	kindEditFormat:    {"span", "blocks", "insert"},
	kindEditGuard:     {"span", "signature", "comments"},
	kindDedupMethod:   {"auto", "embedding", "lexical"},
	kindAutoBool:      {"auto", "true", "false"},
	kindSandbox:       {"auto", "require", "none"},
	kindHostFamily:    {"claude", "gemini", "gpt"},
	kindDelegateWhen:  {"pays", "always"},
	kindOnRedBaseline: {"stop", "continue"},
}

// bounds says in words what values the setting takes: a refusal's "want", and help's.
func (s keySpec) bounds() string {
	if allowed, ok := kindValues[s.kind]; ok {
		return "one of " + strings.Join(allowed, ", ")
	}
	switch s.kind {
	case kindCount:
		if s.max > 0 {
			return fmt.Sprintf("a whole number from 1 to %d", s.max)
		}
		return "a whole number of at least 1"
	case kindCountOrZero:
		if s.max > 0 {
			return fmt.Sprintf("a whole number from 0 to %d", s.max)
		}
		return "a whole number"
	case kindCosine:
		return "a plain decimal from -1 to 1"
	case kindDuration:
		return "a positive duration such as 90s or 10m"
	case kindDurationOrZero:
		return "a duration such as 30s, or 0 for none"
	case kindBool:
		return "true or false"
	case kindSlug:
		return "a role name (lower-case letters, digits and dashes)"
	case kindPrice:
		return "a plain decimal of at least 0"
	case kindRatio:
		return "a plain decimal above 0"
	}
	return "text"
}

// takenBy lists the registered modes that take a setting a mode chooses to take: the contract's
// in their order, then the others by name.
func (s keySpec) takenBy() []string {
	registeredMu.RLock()
	names := slices.Sorted(maps.Keys(registered))
	registeredMu.RUnlock()
	var out []string
	for _, m := range Modes {
		if registeredTakes(m, s.key) {
			out = append(out, m)
		}
	}
	for _, m := range names {
		if !slices.Contains(Modes, m) && registeredTakes(m, s.key) {
			out = append(out, m)
		}
	}
	return out
}

// SettingDoc is one declared setting as a person reads it (`locum help settings`).
type SettingDoc struct {
	Key, Flag, Env, Default string
	// Bounds says what values it takes; RepoMax, when above 0, is the most a pack or the
	// workspace may set.
	Bounds  string
	RepoMax int64
	// Every says every mode takes it; Ledger that only the ledger resolves it; else Modes are
	// the registered modes that take it.
	Every, Ledger bool
	Modes         []string
	// OperatorOnly: only the operator sets it (a flag, the environment, the user config).
	// Otherwise Repository says a pack or the workspace may set it too (Endpoint: only as the
	// workspace's endpoint), Call that a tool call may, and Lower that a call may only lower or
	// narrow it.
	OperatorOnly, Repository, Endpoint, Call, Lower bool
	Doc                                             string
	// Group is where its flag stands in a command's help.
	Group Group
}

// SettingDocs are every declared setting, once, in the table's order.
func SettingDocs() []SettingDoc {
	out := make([]SettingDoc, 0, len(keySpecs))
	for _, s := range keySpecs {
		d := SettingDoc{
			Key: s.key.name, Flag: s.flag, Env: s.env, Default: s.def, Bounds: s.bounds(), RepoMax: s.repoMax,
			Every: !s.perMode && !s.ledger, Ledger: s.ledger, OperatorOnly: s.operatorOnly,
			Repository: !s.operatorOnly && !s.global,
			// The workspace's endpoint names the base URL, the one setting every command shares
			// that a repository's file may set (Resolve).
			Endpoint: s.key == BaseURL,
			Call:     !s.operatorOnly && s.flag != "",
			Doc:      s.doc,
			Group:    s.group,
		}
		d.Lower = d.Call && s.ceiling
		if s.perMode {
			d.Modes = s.takenBy()
		}
		out = append(out, d)
	}
	return out
}
