package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"locum": func() { os.Exit(Main(os.Args)) },
	})
}

// TestScripts runs the CLI acceptance tests in testdata/script: the real binary, in-process built,
// asserting stdout, stderr, exit codes and files on disk.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
		},
		Setup: func(e *testscript.Env) error {
			// A HOME of the test's own keeps user state out of the developer's home.
			e.Setenv("HOME", e.WorkDir+"/home")
			return nil
		},
	})
}

// cmdExits runs a command and asserts its exact exit code: exits CODE PROGRAM [ARGS...].
// testscript's own ! only says "non-zero", and locum's 1 and 2 mean different things.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}
