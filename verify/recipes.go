// Package verify runs the verify recipes of a composition and, from the verify-offline issue on,
// locum's own offline self-check.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
)

// Verdict of one recipe.
type Verdict string

const (
	Green     Verdict = "ok"
	Red       Verdict = "FAIL"
	CouldNot  Verdict = "ERROR"
	noRecipes         = "refusing to report green: the composition declares no verify recipes"
)

// Outcome is how one recipe ended.
type Outcome struct {
	Name     string
	Verdict  Verdict
	Detail   string // "exit 1", "requires node, not found on PATH", ...
	Output   []byte // tail of the recipe's output, kept for a red or a could-not-run
	Duration time.Duration
}

// NothingToRunError is a composition (or a selection) with no recipe: a green over nothing would
// be a lie.
type NothingToRunError struct{ Reason string }

func (e *NothingToRunError) Error() string { return e.Reason }

// UnknownRecipeError is an id the composition does not declare.
type UnknownRecipeError struct {
	Name  string
	Known []string
}

func (e *UnknownRecipeError) Error() string {
	return fmt.Sprintf("no recipe %q in the composition; known: %s (locum verify --list shows them)", e.Name, strings.Join(e.Known, ", "))
}

// Select returns the recipes named (by full name or bare id), or all of them when none is named.
func Select(c *packs.Composition, names []string) ([]packs.Recipe, error) {
	if len(c.Recipes) == 0 {
		return nil, &NothingToRunError{Reason: noRecipes}
	}
	if len(names) == 0 {
		return c.Recipes, nil
	}
	var out []packs.Recipe
	for _, n := range names {
		r, ok := c.Find(n)
		if !ok {
			known := make([]string, len(c.Recipes))
			for i, r := range c.Recipes {
				known[i] = r.Name
			}
			return nil, &UnknownRecipeError{Name: n, Known: known}
		}
		out = append(out, r)
	}
	return out, nil
}

// Run runs each recipe with bash -c from the repository root, stdin closed, one after another,
// and writes one line per recipe to w: its verdict, name and duration, and for a recipe that did
// not pass, the tail of its output. The directory of the running locum binary is put first on
// PATH so a recipe that calls locum gets this one.
func Run(ctx context.Context, root string, recipes []packs.Recipe, w io.Writer) ([]Outcome, error) {
	if len(recipes) == 0 {
		return nil, &NothingToRunError{Reason: noRecipes}
	}
	env := recipeEnv()
	var outcomes []Outcome
	for _, r := range recipes {
		if ctx.Err() != nil {
			return outcomes, ctx.Err()
		}
		o := runOne(ctx, root, r, env)
		outcomes = append(outcomes, o)
		line := fmt.Sprintf("%s %s (%s)", o.Verdict, o.Name, o.Duration.Round(time.Millisecond))
		if o.Detail != "" && o.Verdict != Green {
			line += ": " + o.Detail
		}
		fmt.Fprintln(w, line)
		if o.Verdict != Green && len(o.Output) > 0 {
			for _, l := range strings.Split(strings.TrimRight(string(o.Output), "\n"), "\n") {
				fmt.Fprintln(w, "    "+l)
			}
		}
	}
	return outcomes, nil
}

// Worst folds outcomes into an exit code: 2 when any could not run, else 1 when any is red.
func Worst(outcomes []Outcome) int {
	code := 0
	for _, o := range outcomes {
		switch o.Verdict {
		case CouldNot:
			return 2
		case Red:
			code = 1
		}
	}
	return code
}

func runOne(ctx context.Context, root string, r packs.Recipe, env []string) Outcome {
	o := Outcome{Name: r.Name}
	for _, req := range r.Requires {
		if _, err := lookPath(req, env); err != nil {
			o.Verdict, o.Detail = CouldNot, fmt.Sprintf("requires %s, not found on PATH", req)
			return o
		}
	}
	command := r.Run
	if r.NeedsPackRoot() && r.Pack != nil {
		dir, err := os.MkdirTemp("", "locum-pack-")
		if err != nil {
			o.Verdict, o.Detail = CouldNot, err.Error()
			return o
		}
		defer os.RemoveAll(dir)
		if err := r.Pack.Materialize(dir); err != nil {
			o.Verdict, o.Detail = CouldNot, "writing the built-in pack's files: "+err.Error()
			return o
		}
		command = r.WithPackRoot(dir)
	}
	res, err := rails.RunShell(ctx, rails.ShellCommand{Command: command, Dir: root, Env: env, TailBytes: 8192})
	o.Duration, o.Output = res.Duration, res.Output
	switch {
	case err != nil:
		o.Verdict, o.Detail = CouldNot, err.Error()
	case res.Exited && res.ExitCode == 0:
		o.Verdict = Green
	case res.Exited && (res.ExitCode == 2 || res.ExitCode == 126 || res.ExitCode == 127):
		o.Verdict, o.Detail = CouldNot, res.Verdict()+" (could not run)"
	case res.Exited:
		o.Verdict, o.Detail = Red, res.Verdict()
	default:
		o.Verdict, o.Detail = CouldNot, res.Verdict()
	}
	return o
}

func recipeEnv() []string {
	env := os.Environ()
	exe, err := os.Executable()
	if err != nil {
		return env
	}
	dir := filepath.Dir(exe)
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + v
			return env
		}
	}
	return append(env, "PATH="+dir)
}

// lookPath finds a program on the PATH of env, the one the recipe will run with.
func lookPath(name string, env []string) (string, error) {
	pathList := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.Join(exec.ErrNotFound, errors.New(name))
}
