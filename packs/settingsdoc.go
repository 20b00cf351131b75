package packs

import (
	"fmt"
	"strings"
)

// kindValues are the values a setting of an enumerated kind takes, in the order help and the
// schema list them.
var kindValues = map[valueKind][]string{
	kindEffort:       {"none", "low", "medium", "high"},
	kindEditFormat:   {"span", "blocks", "insert"},
	kindEditGuard:    {"span", "signature", "comments"},
	kindDedupMethod:  {"auto", "embedding", "lexical"},
	kindAutoBool:     {"auto", "true", "false"},
	kindSandbox:      {"auto", "require", "none"},
	kindHostFamily:   {"claude", "gemini", "gpt"},
	kindDelegateWhen: {"pays", "always"},
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
