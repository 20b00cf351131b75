package packs

import (
	"strings"
)

// Form is what a value of a setting is, for a front end that states it beside the setting's
// name (the MCP tools' input schemas): the JSON type a value is given as, the values it takes
// where they are few, its bounds, and whether it is a duration.
type Form struct {
	// Type is "integer", "number", "boolean" or "string".
	Type string
	// Values are the values it takes, where they are few; nil for any of its type.
	Values []string
	// Min and Max bound a number, where Bounded.
	Min, Max float64
	Bounded  bool
	// Duration says a value is a duration such as 10m; OrZero that 0 means none.
	Duration, OrZero bool
}

// Form is the form of the setting's values, from its kind and bounds in the table.
func (f FlagSpec) Form() Form {
	s, _ := specOf(f.Key)
	switch s.kind {
	case kindCount:
		return Form{Type: "integer", Min: 1, Max: float64(s.max), Bounded: s.max > 0}
	case kindCountOrZero:
		return Form{Type: "integer", Min: 0, Max: float64(s.max), Bounded: s.max > 0}
	case kindCosine:
		return Form{Type: "number", Min: -1, Max: 1, Bounded: true}
	case kindPrice, kindRatio:
		return Form{Type: "number"}
	case kindBool:
		return Form{Type: "boolean"}
	case kindDuration:
		return Form{Type: "string", Duration: true}
	case kindDurationOrZero:
		return Form{Type: "string", Duration: true, OrZero: true}
	}
	return Form{Type: "string", Values: s.values()}
}

// values are the values a setting of a closed kind takes, nil for another kind. check is where
// they are declared: it refuses any other value wanting "one of A, B, C", and a closed kind has no
// value that is empty.
func (s keySpec) values() []string {
	_, err := s.check("")
	if err == nil {
		return nil
	}
	list, ok := strings.CutPrefix(err.Error(), "one of ")
	if !ok {
		return nil
	}
	return strings.Split(list, ", ")
}
