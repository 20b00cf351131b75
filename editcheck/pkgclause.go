package editcheck

import (
	"regexp"
	"strings"
)

// packageClause is a line holding a Go package clause alone (a comment may follow it).
var packageClause = regexp.MustCompile(`^\s*package\s+[\p{L}_][\p{L}\p{Nd}_]*\s*;?\s*(//.*)?$`)

// DropPackageClause takes from a reply to a declaration's span a leading package clause the span
// has none of, with the blank lines after it: a small model often starts its reply so, and the
// clause would land in the middle of the file. It returns the reply as it is, and "", where the
// span has a package clause, or the reply does not start with one.
func DropPackageClause(span, reply []string) (kept []string, clause string) {
	for _, l := range span {
		if packageClause.MatchString(l) {
			return reply, ""
		}
	}
	first := 0
	for first < len(reply) && strings.TrimSpace(reply[first]) == "" {
		first++
	}
	if first == len(reply) || !packageClause.MatchString(reply[first]) {
		return reply, ""
	}
	rest := first + 1
	for rest < len(reply) && strings.TrimSpace(reply[rest]) == "" {
		rest++
	}
	return reply[rest:], strings.TrimSpace(reply[first])
}
