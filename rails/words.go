package rails

import (
	"fmt"
	"regexp"
)

// settingRef is a setting named in a message template: {max_input_bytes}.
var settingRef = regexp.MustCompile(`\{([a-z][a-z0-9_]*)\}`)

// Words fills the {setting} references of a message template with name(setting). Only a
// template is filled, never the values put into it, so a file named "{lines}.go" stays as it is.
func Words(template string, name func(setting string) string) string {
	return settingRef.ReplaceAllStringFunc(template, func(ref string) string {
		return name(ref[1 : len(ref)-1])
	})
}

// WordedText is a message whose template names settings: Error words them as the command line
// does, Words as the caller asks.
type WordedText struct {
	Format string
	Args   []any
}

// Textf is the message format with args, whose format may name settings as {setting}.
func Textf(format string, args ...any) WordedText { return WordedText{Format: format, Args: args} }

func (t WordedText) Error() string { return t.Words(FlagName) }

// Words is the message with its settings named by name.
func (t WordedText) Words(name func(setting string) string) string {
	return fmt.Sprintf(Words(t.Format, name), t.Args...)
}
