package packs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// hostile are values a model could write into an item or a step's output, each trying to run
// "touch pwned" from wherever a template puts it.
var hostile = []string{
	"$(touch pwned)",
	"`touch pwned`",
	"'; touch pwned; '",
	`"; touch pwned; "`,
	"x\nEOF\ntouch pwned\nEOF\n",
	"x'\ntouch pwned #",
	"-va[$(touch pwned)]",
	"a[$(touch pwned)]",
	"$'\\x27'; touch pwned",
	"\\'; touch pwned #",
}

// acceptedTemplates are verify templates that put {{x}}, a value, where bash reads it as one
// argument; {{p}} is a parameter.
var acceptedTemplates = []string{
	"grep -q x {{x}}",
	"grep -q x {{ x }} && cat {{x}} >/dev/null",
	"# it's a comment with an apostrophe\ngrep -q x {{x}}",
	"grep -q 'it''s' {{x}}; grep -q \"{{p}}\" {{x}}",
	"echo $(cat {{x}}) >/dev/null",
	"cat <(echo {{x}}) >/dev/null",
	"if test -n {{x}}; then printf '%s\\n' {{x}} >/dev/null; fi",
	"[ -f {{x}} ] || [ {{x}} = y ]",
	"printf -v n '%s' {{x}}",
	"f() { echo \"$1\" >/dev/null; }; f {{x}}",
	"case a in a) echo {{x}} >/dev/null;; esac",
	"cat <<EOF >/dev/null; echo {{x}} >/dev/null\nbody\nEOF",
	"cat <<'EOF' >/dev/null\n{{p}}\nEOF\necho {{x}} >/dev/null",
	"echo \\'{{p}} >/dev/null && grep -q x {{x}}",
	"{{p}} {{x}}",
	"echo $'it\\'s' {{x}} >/dev/null",
	"grep -q todo-{{x}} --label={{x}} /dev/null; echo {{x}}{{x}}:{{x}} >/dev/null",
}

func TestCheckCommand(t *testing.T) {
	params := map[string]string{"p": "echo"}
	asWritten := func(n string) bool { return n == "p" }
	for _, tmpl := range acceptedTemplates {
		assert.NoError(t, CheckCommand(tmpl, params, asWritten), tmpl)
	}
	for _, c := range []struct{ template, where string }{
		{"grep -q x '{{x}}'", "inside single quotes"},
		{`grep -q x "{{x}}"`, "inside double quotes"},
		{"echo $'{{x}}'", "inside single quotes"},
		{"cat <<EOF\n{{x}}\nEOF", "in a here-document"},
		{"cat <<EOF\r\nEOF\ngrep -q done t.txt {{x}}\nEOF\r\ngrep -q done t.txt", "control character"},
		{"cat <<EOF\nEOF\r\ngrep -q done t.txt {{x}}\nEOF\ngrep -q done t.txt", "control character"},
		{"grep -q x {{x}}\r", "control character"},
		{"grep -q x {{x}}\x1b", "control character"},
		{"cat <<'EOF'\n{{x}}\nEOF", "in a here-document"},
		{"cat <<EOF\n$(echo {{x}})\nEOF", "in a here-document"},
		{"cat <<<{{x}}", "in a redirection"},
		{"# it's {{x}}\ntrue", "in a comment"},
		{"true # {{x}}", "in a comment"},
		{"echo `cat {{x}}`", "inside backquotes"},
		{`echo "$(cat {{x}})"`, "inside double quotes"},
		{"{{x}} --version", "the command's name"},
		{"$(echo {{x}}) --version", "the command's name"},
		{"A={{x}} make", "in an assignment"},
		{"echo $(( {{x}} ))", "in arithmetic"},
		{"(( {{x}} ))", "in arithmetic"},
		{"let {{x}}", "in arithmetic"},
		{"[[ {{x}} -eq 1 ]]", "inside [[ ]]"},
		{"echo ${a:-{{x}}}", "inside ${...}"},
		{"echo *{{x}}", "joined to more than plain text"},
		{"echo ~{{x}}", "joined to more than plain text"},
		{"echo {a,{{x}}}", "joined to more than plain text"},
		{`echo \{{x}}`, "joined to more than plain text"},
		{`echo "a"{{x}}`, "joined to more than plain text"},
		{"echo $HOME{{x}}", "inside ${...}"},
		{"echo a\\\\{{x}}", "joined to more than plain text"},
		{"echo > {{x}}", "in a redirection"},
		{"for f in {{x}}; do :; done", "in a loop's or a case's words"},
		{"case {{x}} in *) ;; esac", "in a loop's or a case's words"},
		{"eval {{x}}", "an argument of eval"},
		{`\eval {{x}}`, "an argument of eval"},
		{"'ev'al {{x}}", "an argument of eval"},
		{"declare {{x}}", "an argument of declare"},
		{"export {{x}}", "an argument of export"},
		{"read {{x}}", "an argument of read"},
		{"trap {{x}} EXIT", "an argument of trap"},
		{"command {{x}}", "an argument of command"},
		{"$cmd {{x}}", "whose name is not written out"},
		{"printf {{x}}", "printf's format"},
		{"printf -v n {{x}}", "printf's format"},
		{"printf -v {{x}} y", "printf's format"},
		{"test -v {{x}}", "after one that is or could be -v"},
		{"[ {{x}} {{x}} ]", "after one that is or could be -v"},
		{"f() { echo; }; {{x}}() { :; }", "name"},
		{"echo ${ cat {{x}}; }", "inside ${ ...; }"},
		{"echo 'open {{x}}", "not a command bash can read"},
		// A parameter is shell text: one that opens a quote moves the value inside it.
		{"{{q}} {{x}}'", "inside single quotes"},
	} {
		t.Run(c.template, func(t *testing.T) {
			vars := map[string]string{"p": "echo", "q": "echo '"}
			err := CheckCommand(c.template, vars, func(n string) bool { return n == "p" || n == "q" })
			var ce *CommandError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Error(), c.where)
		})
	}
	// A template with no value in it is the pack's own command, not parsed.
	require.NoError(t, CheckCommand("echo '{{p}}", params, asWritten))
}

// TestExpandCommandValueIsOneWord expands every accepted template with every hostile value and
// reads the command back with the same parser: each value is one literal argument, and the
// command is the template's but for it.
func TestExpandCommandValueIsOneWord(t *testing.T) {
	for _, tmpl := range acceptedTemplates {
		for _, v := range hostile {
			assertValueOneWord(t, tmpl, v)
		}
	}
}

// TestExpandCommandRunsNoValue runs the accepted templates, expanded with the hostile values,
// under bash itself: no value runs.
func TestExpandCommandRunsNoValue(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here to run the expanded commands with")
	}
	dir := t.TempDir()
	for _, tmpl := range acceptedTemplates {
		for _, v := range hostile {
			cmd, err := ExpandCommand(tmpl, map[string]string{"x": v, "p": "echo"}, func(n string) bool { return n == "p" })
			require.NoError(t, err, tmpl)
			c := exec.Command(bash, "-c", cmd)
			c.Dir = dir
			_ = c.Run() // the verdict does not matter, only what ran
			_, err = os.Stat(filepath.Join(dir, "pwned"))
			require.ErrorIs(t, err, os.ErrNotExist, "%q with %q ran the value: %s", tmpl, v, cmd)
		}
	}
}

func TestExpandCommandRefusesAtExpansion(t *testing.T) {
	_, err := ExpandCommand("cat <<EOF\n{{x}}\nEOF", map[string]string{"x": "$(touch pwned)"}, func(string) bool { return false })
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	// The operator's parameter is checked as given: one that opens a quote is refused there.
	_, err = ExpandCommand("{{p}} {{x}}", map[string]string{"p": "echo '", "x": "v"}, func(n string) bool { return n == "p" })
	require.ErrorAs(t, err, &ce)
}

// FuzzExpandCommand holds, for any template the check accepts, that a value expanded into it is
// one literal argument and changes nothing else of the command.
func FuzzExpandCommand(f *testing.F) {
	for _, tmpl := range acceptedTemplates {
		f.Add(tmpl, 0)
	}
	for _, seed := range []string{
		"cat <<EOF\n{{x}}\nEOF", "cat <<-'EOF'\n\t{{x}}\n\tEOF", "# it's\necho {{x}} '", "echo \"a'b\" {{x}} 'c\"d'",
		"echo $'a\\'b' {{x}}", "echo `echo {{x}}`", "echo `echo \\`{{x}}\\``", "echo \"$(echo '{{x}}')\"",
		"echo $(echo \"$(echo {{x}})\")", "cat <<EOF; echo {{x}}\nEOF\n", "echo {{x}} # {{x}}", "echo \\\n{{x}}",
		"echo {{x}}\\\n#", "a=$(echo {{x}}) b", "echo ${x#{{x}}}", "[[ a == {{x}} ]]", "echo $[{{x}}]",
		"cat <<EOF\r\nEOF\necho {{x}}\nEOF\r\n", "cat <<EOF\nEOF\r\necho {{x}}\nEOF\n",
	} {
		f.Add(seed, 0)
	}
	f.Fuzz(func(t *testing.T, tmpl string, pick int) {
		v := hostile[uint(pick)%uint(len(hostile))]
		assertValueOneWord(t, tmpl, v)
	})
}

const testSlot = "locumtestslotz"

// assertValueOneWord expands tmpl with value v for every placeholder but the parameter {{p}}
// ("echo"), and, where ExpandCommand accepts it, parses the result: each v is within an argument
// of a command that holds no expansion, there are as many as the template has placeholders for
// values, and with each put back as a slot word the command is the template's, node for node.
func assertValueOneWord(t *testing.T, tmpl, v string) {
	t.Helper()
	if strings.Contains(tmpl, testSlot) || strings.Contains(tmpl, "pwned") || strings.Contains(tmpl, "\x00") {
		return
	}
	asWritten := func(n string) bool { return n == "p" }
	vars := map[string]string{"p": "echo"}
	for _, m := range templateRef.FindAllStringSubmatch(tmpl, -1) {
		if m[1] != "p" {
			vars[m[1]] = v
		}
	}
	got, err := ExpandCommand(tmpl, vars, asWritten)
	if err != nil || len(vars) == 1 {
		return // refused, or no value to hold
	}
	skeleton, err := expand(tmpl, vars, func(name, val string) string {
		if asWritten(name) {
			return val
		}
		return testSlot
	})
	require.NoError(t, err)
	parser := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))
	want, err := parser.Parse(strings.NewReader(skeleton), "")
	require.NoError(t, err, "accepted, so it parses: %q", skeleton)
	file, err := parser.Parse(strings.NewReader(got), "")
	require.NoError(t, err, "the expanded command must parse: %q", got)
	n := 0
	syntax.Walk(file, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok {
			return true
		}
		for _, w := range call.Args[1:] {
			if s, ok := literalWord(w); ok && strings.Contains(s, v) {
				n += strings.Count(s, v)
				w.Parts = []syntax.WordPart{&syntax.Lit{ValuePos: w.Pos(), ValueEnd: w.End(), Value: strings.ReplaceAll(s, v, testSlot)}}
			}
		}
		return true
	})
	slots := strings.Count(skeleton, testSlot)
	assert.Equal(t, slots, n, "each value must be within one argument: %q", got)
	assert.Equal(t, shape(want), shape(file), "the value changed the command: %q", got)
}

// literalWord is what bash reads w as, when it holds no expansion of any kind.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// shape is a syntax tree as its node kinds, operators and texts, positions left out.
func shape(f *syntax.File) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			out = append(out, ")")
			return true
		}
		s := fmt.Sprintf("%T", n)
		switch n := n.(type) {
		case *syntax.Lit:
			s += " " + n.Value
		case *syntax.SglQuoted:
			s += fmt.Sprintf(" %v %s", n.Dollar, n.Value)
		case *syntax.Comment:
			s += " " + n.Text
		case *syntax.Redirect:
			s += " " + n.Op.String()
		case *syntax.BinaryCmd:
			s += " " + n.Op.String()
		case *syntax.Stmt:
			s += fmt.Sprintf(" %v %v", n.Negated, n.Background)
		case *syntax.CmdSubst:
			s += fmt.Sprintf(" %v", n.Backquotes)
		}
		out = append(out, s)
		return true
	})
	return out
}
