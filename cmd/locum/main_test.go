package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/locumdev/locum/runner/scripted"
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
			"serve": cmdServe,
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

// cmdServe starts a scripted OpenAI-compatible server for the rest of the script and points
// LOCUM_BASE_URL at it: serve [-mimic KIND] [SCRIPT.json], or serve -refused for an address where
// nothing listens. Every request it receives is appended to $WORK/requests.jsonl.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! serve")
	}
	var script scripted.Script
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-refused":
			ts.Setenv("LOCUM_BASE_URL", "http://"+scripted.RefusedAddr()+"/v1")
			return
		case "-mimic":
			if i+1 >= len(args) {
				ts.Fatalf("serve: -mimic needs a server kind")
			}
			script.Mimic = args[i+1]
			i++
		default:
			sc, err := scripted.LoadScript(ts.MkAbs(args[i]))
			ts.Check(err)
			if sc.Mimic != "" {
				script.Mimic = sc.Mimic
			}
			script.Routes = append(script.Routes, sc.Routes...)
		}
	}
	srv, err := scripted.Start(script)
	ts.Check(err)
	log, err := os.OpenFile(ts.MkAbs("requests.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	ts.Check(err)
	srv.Log = log
	ts.Defer(func() {
		srv.Close()
		log.Close()
	})
	ts.Setenv("LOCUM_BASE_URL", srv.BaseURL())
	ts.Setenv("SERVER_URL", srv.URL)
}
