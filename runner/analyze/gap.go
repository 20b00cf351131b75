package analyze

import (
	"path"
	"strings"
)

// The states of a verification gap.
const (
	GapNone    = "none"    // every changed file was named by the verify or under a test it ran
	GapFound   = "gap"     // some changed file the verify cannot have seen
	GapUnknown = "unknown" // the verify runs something whose reach cannot be told from its text
	GapNA      = "n/a"     // no file was changed
)

// Gap is what the verify command did not see of the files a run changed.
type Gap struct {
	State  string   `json:"state"`
	Files  []string `json:"files"`
	Reason string   `json:"reason,omitempty"`
}

func (st *state) gap() Gap {
	// A run that did not pass leaves its files as they were: nothing it changed stays unseen.
	if st.run.Status != "OK" || !st.wrote || len(st.edited) == 0 {
		return Gap{State: GapNA, Files: []string{}}
	}
	if !st.verifySeen {
		return Gap{State: GapUnknown, Files: []string{}, Reason: "the journal does not name the verify command"}
	}
	return VerifyGap(st.verify, st.lastTail, st.edited)
}

// VerifyGap tells, from the text of a verify command and the end of its output, which changed
// files (slash paths relative to the repository root, where the verify runs) it cannot have
// seen. A file counts as seen when the command names it; a Go file also when the command runs
// go test on its package and the output does not say that package has no test files. Only what
// the text shows is judged: a script or a make target may reach anything, so it leaves the
// answer unknown rather than guessed.
func VerifyGap(verify, tail string, files []string) Gap {
	cmds := simpleCommands(verify)
	var unseen, unknown []string
	reason := ""
	for _, f := range files {
		seen, why := sees(cmds, verify, tail, f)
		switch seen {
		case seenNo:
			unseen = append(unseen, f)
			if reason == "" {
				reason = why
			}
		case seenUnknown:
			unknown = append(unknown, f)
		}
	}
	switch {
	case len(unseen) > 0:
		return Gap{State: GapFound, Files: unseen, Reason: reason}
	case len(unknown) > 0:
		return Gap{State: GapUnknown, Files: unknown, Reason: "the verify runs a command whose reach cannot be told from its text"}
	}
	return Gap{State: GapNone, Files: []string{}}
}

type seenness int

const (
	seenYes seenness = iota
	seenNo
	seenUnknown
)

// inspectors are commands that look at files without running any test.
var inspectors = map[string]bool{
	"true": true, ":": true, "false": true, "exit": true, "echo": true, "printf": true,
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "test": true, "[": true, "[[": true,
	"cat": true, "diff": true, "cmp": true, "wc": true, "head": true, "tail": true, "gofmt": true,
	"!": true,
}

func sees(cmds [][]string, verify, tail, file string) (seenness, string) {
	if names(verify, file) {
		return seenYes, ""
	}
	goTests, opaque, compileOnly := false, false, false
	var patterns [][]string
	for _, c := range cmds {
		switch {
		case len(c) >= 2 && c[0] == "go" && c[1] == "test":
			goTests = true
			patterns = append(patterns, goPatterns(c[2:]))
		case len(c) >= 1 && c[0] == "go":
			compileOnly = true
		case len(c) >= 1 && inspectors[c[0]]:
		default:
			opaque = true
		}
	}
	if strings.HasSuffix(file, ".go") {
		dir := path.Dir(file)
		if goTests && !hasCd(cmds) {
			for _, p := range patterns {
				if covers(p, dir) {
					if noTestFiles(tail, dir) {
						return seenNo, "go test found no test files in the package of " + file
					}
					return seenYes, ""
				}
			}
		}
		if opaque || hasCd(cmds) {
			return seenUnknown, ""
		}
		switch {
		case goTests:
			return seenNo, "the verify runs go test, but not on the package of " + file
		case compileOnly:
			return seenNo, "the verify compiles but runs no test of the package of " + file
		}
		return seenNo, "the verify neither names " + file + " nor runs a test of its package"
	}
	if opaque || goTests || compileOnly {
		return seenUnknown, ""
	}
	return seenNo, "the verify does not name " + file
}

// names reports whether the command text names the file, by its path or its base name, as a
// whole word.
func names(verify, file string) bool {
	for _, n := range []string{file, path.Base(file)} {
		for i := 0; ; {
			j := strings.Index(verify[i:], n)
			if j < 0 {
				break
			}
			at := i + j
			end := at + len(n)
			if (at == 0 || strings.ContainsRune(" \t'\"/=(<>", rune(verify[at-1]))) &&
				(end == len(verify) || strings.ContainsRune(" \t'\";|&)<>:", rune(verify[end]))) {
				return true
			}
			i = at + 1
		}
	}
	return false
}

// simpleCommands splits a command line at ; & | and line breaks into words, quotes dropped. It
// is not a shell parser; it needs only the first words of each command.
func simpleCommands(line string) [][]string {
	var out [][]string
	split := strings.FieldsFunc(line, func(r rune) bool {
		return r == ';' || r == '&' || r == '|' || r == '\n' || r == '(' || r == ')' || r == '{' || r == '}'
	})
	for _, part := range split {
		var words []string
		for _, w := range strings.Fields(part) {
			w = strings.Trim(w, `'"`)
			if w != "" {
				words = append(words, w)
			}
		}
		// Environment assignments before the command name do not change which command runs.
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

func hasCd(cmds [][]string) bool {
	for _, c := range cmds {
		if c[0] == "cd" || c[0] == "pushd" {
			return true
		}
	}
	return false
}

// valueFlags are go test flags whose value is the next word.
var valueFlags = map[string]bool{
	"-run": true, "-skip": true, "-bench": true, "-benchtime": true, "-count": true, "-cpu": true,
	"-timeout": true, "-tags": true, "-p": true, "-parallel": true, "-coverpkg": true, "-covermode": true,
	"-coverprofile": true, "-o": true, "-exec": true, "-fuzz": true, "-fuzztime": true, "-shuffle": true,
	"-C": true, "-ldflags": true, "-gcflags": true, "-mod": true, "-modfile": true, "-vet": true,
}

func goPatterns(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			name, _, hasValue := strings.Cut(strings.Replace(a, "--", "-", 1), "=")
			if valueFlags[name] && !hasValue {
				i++
			}
			if a == "-args" {
				break
			}
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		out = []string{"."}
	}
	return out
}

// covers reports whether go test with these patterns, run at the root, tests the package in dir.
func covers(patterns []string, dir string) bool {
	for _, p := range patterns {
		rel := strings.TrimPrefix(p, "./")
		switch {
		case p == "./..." || p == "...":
			return true
		case p == "." || rel == "":
			if dir == "." {
				return true
			}
		case strings.HasPrefix(p, "./") || !strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
			if base, ok := strings.CutSuffix(rel, "/..."); ok {
				if dir == base || strings.HasPrefix(dir, base+"/") {
					return true
				}
			} else if path.Clean(rel) == dir {
				return true
			}
		default:
			// An import path: the package dir is some tail of it.
			base, wild := strings.CutSuffix(p, "/...")
			for i := 0; i < len(base); i++ {
				if base[i] != '/' {
					continue
				}
				tail := base[i+1:]
				if dir == tail || (wild && strings.HasPrefix(dir, tail+"/")) {
					return true
				}
			}
		}
	}
	return false
}

// noTestFiles reports whether go test's output says the package in dir has no test files.
func noTestFiles(tail, dir string) bool {
	for _, line := range strings.Split(tail, "\n") {
		if !strings.Contains(line, "[no test files]") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		pkg := f[1]
		if pkg == dir || strings.HasSuffix(pkg, "/"+dir) || (dir == "." && !strings.Contains(pkg, "/")) {
			return true
		}
	}
	return false
}
