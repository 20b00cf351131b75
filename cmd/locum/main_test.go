package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/ledger"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/symbols"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"locum": func() { os.Exit(Main(os.Args)) },
	})
}

// TestScripts runs the CLI acceptance tests in testdata/script: the real binary, in-process built,
// asserting stdout, stderr, exit codes and files on disk. testscript runs the scripts in parallel,
// each in a work directory of its own.
func TestScripts(t *testing.T) {
	p := scriptParams()
	p.Dir = "testdata/script"
	testscript.Run(t, p)
}

// scriptParams are the custom commands, conditions and setup every acceptance script runs with.
func scriptParams() testscript.Params {
	return testscript.Params{
		RequireExplicitExec: false,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"envfile":     cmdEnvFile,
			"serve":       cmdServe,
			"waitfile":    cmdWaitFile,
			"waitgrep":    cmdWaitGrep,
			"signal":      cmdSignal,
			"pidgone":     cmdPidGone,
			"procgone":    cmdProcGone,
			"pidof":       cmdPidOf,
			"goenv":       cmdGoEnv,
			"mode":        cmdMode,
			"setmode":     cmdSetMode,
			"owner":       cmdOwner,
			"chown":       cmdChown,
			"mkfifo":      cmdMkfifo,
			"holdopen":    cmdHoldOpen,
			"keygen":      cmdKeygen,
			"trust":       cmdTrust,
			"mkrouting":   cmdMkRouting,
			"resign":      cmdResign,
			"mkrecord":    cmdMkRecord,
			"flipchar":    cmdFlipChar,
			"resultjson":  cmdResultJSON,
			"symbolsjson": cmdSymbolsJSON,
			"benchjson":   cmdBenchJSON,
			"subst":       cmdSubst,
			"seal":        cmdSeal,
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			// [treesitter]: this build reads Python, TypeScript, JavaScript and Rust (it has cgo).
			if cond == "treesitter" {
				return symbols.CgoBuild, nil
			}
			// [sandbox]: bubblewrap is installed and may make its namespaces here.
			if cond == "sandbox" {
				ok, _ := rails.SandboxAvailable()
				return ok, nil
			}
			// [listening:HOST:PORT]: something answers there (a developer's own model server),
			// so a script that needs the port free skips.
			if addr, ok := strings.CutPrefix(cond, "listening:"); ok {
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					return false, nil
				}
				conn.Close()
				return true, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			// A HOME of the test's own keeps user state out of the developer's home.
			e.Setenv("HOME", e.WorkDir+"/home")
			examples, err := filepath.Abs("../../examples")
			if err != nil {
				return err
			}
			e.Setenv("EXAMPLES", examples)
			corpus, err := filepath.Abs("../../runner/dedup/testdata/labelled")
			if err != nil {
				return err
			}
			e.Setenv("CORPUS", corpus)
			ledgerRuns, err := filepath.Abs("../../runner/ledger/testdata/runs")
			if err != nil {
				return err
			}
			e.Setenv("LEDGER_RUNS", ledgerRuns)
			// A host's recorded-shaped transcripts and the runs they made.
			hostTranscripts, err := filepath.Abs("../../runner/hostusage/testdata/claude")
			if err != nil {
				return err
			}
			e.Setenv("HOST_TRANSCRIPTS", hostTranscripts)
			hostRuns, err := filepath.Abs("../../runner/ledger/testdata/hostruns")
			if err != nil {
				return err
			}
			e.Setenv("HOST_RUNS", hostRuns)
			// The standing cost follows the tool list's measured size, which every change to a
			// tool's description moves: scripts name it rather than copy it.
			tokens := ledger.ToolListTokens(cost.Defaults())
			e.Setenv("TOOL_LIST_TOKENS", strconv.FormatInt(tokens, 10))
			e.Setenv("STANDING_11", strconv.FormatInt(11*tokens, 10))
			e.Setenv("STANDING_11_USD", fmt.Sprintf("%.4f", float64(11*tokens)*cost.Defaults().Prices.Cached/1e6))
			e.Setenv("STANDING_11_USD6", strconv.FormatFloat(cost.Dollars(float64(11*tokens)*cost.Defaults().Prices.Cached/1e6), 'f', -1, 64))
			st := ledger.StandingPerTurn(cost.Defaults())
			e.Setenv("STANDING_BYTES", strconv.FormatInt(st.Bytes, 10))
			e.Setenv("STANDING_PER_TURN", fmt.Sprintf("%.6f", st.USD))
			e.Setenv("STANDING_PER_TURN_JSON", strconv.FormatFloat(st.USD, 'f', -1, 64))
			// Under -race every locum the scripts start would sleep a second before it exits
			// (the race runtime's atexit_sleep_ms), which made the suite wait minutes for nothing.
			// A race found is still reported and still fails the command (exit 66).
			e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// A script runs many small red transforms in one repository on purpose; the pay
			// gate would refuse the later ones. ledger.txtar turns it back on.
			e.Setenv("LOCUM_DELEGATE_WHEN", "always")
			// No mutants after a kept edit, where most scripts test other things; the scripts of
			// the measure (verify_strength*.txtar) turn them back on.
			e.Setenv("LOCUM_MUTANTS", "0")
			return nil
		},
	}
}

// refuseNegation fails a script that puts ! before a command that only acts: a negated action
// would assert nothing.
func refuseNegation(ts *testscript.TestScript, neg bool, name string) {
	if neg {
		ts.Fatalf("unsupported: ! %s", name)
	}
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

// cmdEnvFile sets an environment variable of the script to a file's first line: envfile NAME FILE.
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "envfile")
	if len(args) != 2 {
		ts.Fatalf("usage: envfile NAME FILE")
	}
	line, _, _ := strings.Cut(ts.ReadFile(args[1]), "\n")
	ts.Setenv(args[0], strings.TrimSpace(line))
}

// cmdServe starts a scripted OpenAI-compatible server for the rest of the script and points
// LOCUM_BASE_URL at it: serve [-addr HOST:PORT] [-mimic KIND] [-log FILE] [SCRIPT.json], or
// serve -refused for an address where nothing listens. Every request it receives is appended to
// FILE, $WORK/requests.jsonl unless -log names another (a second server's, say).
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! serve")
	}
	var script scripted.Script
	addr, logName := "", "requests.jsonl"
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-log":
			if i+1 >= len(args) {
				ts.Fatalf("serve: -log needs a file")
			}
			logName = args[i+1]
			i++
		case "-addr":
			if i+1 >= len(args) {
				ts.Fatalf("serve: -addr needs HOST:PORT")
			}
			addr = args[i+1]
			i++
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
	srv, err := scripted.StartAt(addr, script)
	ts.Check(err)
	log, err := os.OpenFile(ts.MkAbs(logName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	ts.Check(err)
	srv.SetLog(log)
	ts.Defer(func() {
		srv.Close()
		log.Close()
	})
	ts.Setenv("LOCUM_BASE_URL", srv.BaseURL())
	ts.Setenv("SERVER_URL", srv.URL)
}

// hangDeadline bounds every wait of a script on another process: long enough that only a hang
// reaches it on a loaded machine, so it never decides an outcome.
const hangDeadline = 2 * time.Minute

// cmdWaitFile waits for a file to appear: waitfile PATH, where PATH may be a glob (a file under
// a run's worktree, whose id the script does not know yet).
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "waitfile")
	if len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	if !waitFor(hangDeadline, func() bool { m, err := filepath.Glob(ts.MkAbs(args[0])); return err == nil && len(m) > 0 }) {
		ts.Fatalf("%s did not appear", args[0])
	}
}

// cmdWaitGrep waits for a file to hold a line matching a pattern: waitgrep PATTERN PATH, where
// PATH may be a glob (a run's journal, whose id the script does not know yet). A scripted
// server's request log exists from the start; this waits for a request.
func cmdWaitGrep(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "waitgrep")
	if len(args) != 2 {
		ts.Fatalf("usage: waitgrep PATTERN PATH")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	matched := func() bool {
		files, _ := filepath.Glob(ts.MkAbs(args[1]))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil && re.Match(data) {
				return true
			}
		}
		return false
	}
	if !waitFor(hangDeadline, matched) {
		ts.Fatalf("no line of %s matched %s", args[1], args[0])
	}
}

func readPid(ts *testscript.TestScript, file string) int {
	data, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	ts.Check(err)
	return pid
}

// cmdSignal sends a signal to the process whose pid a file holds: signal TERM|INT|HUP|KILL PIDFILE.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "signal")
	if len(args) != 2 {
		ts.Fatalf("usage: signal NAME PIDFILE")
	}
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL}
	sig, ok := sigs[args[0]]
	if !ok {
		ts.Fatalf("unknown signal %s", args[0])
	}
	ts.Check(syscall.Kill(readPid(ts, args[1]), sig))
}

// cmdPidGone waits for the process whose pid a file holds to end: pidgone PIDFILE. Negated, it
// asserts that the process runs now.
func cmdPidGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: pidgone PIDFILE")
	}
	pid := readPid(ts, args[0])
	if neg {
		if processGone(pid) {
			ts.Fatalf("process %d has ended", pid)
		}
		return
	}
	if !waitFor(hangDeadline, func() bool { return processGone(pid) }) {
		ts.Fatalf("process %d is still running", pid)
	}
}

// processGone says whether pid has ended: no such process, or a zombie its parent has not reaped.
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && strings.Contains(string(stat), ") Z ")
}

// octalMode reads 0755 or 4755 as a FileMode, setuid, setgid and sticky bits included.
func octalMode(ts *testscript.TestScript, text string) os.FileMode {
	v, err := strconv.ParseUint(text, 8, 32)
	ts.Check(err)
	m := os.FileMode(v & 0o777)
	for bit, flag := range map[uint64]os.FileMode{0o4000: os.ModeSetuid, 0o2000: os.ModeSetgid, 0o1000: os.ModeSticky} {
		if v&bit != 0 {
			m |= flag
		}
	}
	return m
}

const specialBits = os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky

// cmdMode asserts a file's mode bits, setuid, setgid and sticky included: mode PATH 0755.
// Negated, it asserts the file has other bits.
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mode PATH PERM")
	}
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	got, want := st.Mode()&specialBits, octalMode(ts, args[1])
	switch {
	case neg && got == want:
		ts.Fatalf("%s has mode %v", args[0], got)
	case !neg && got != want:
		ts.Fatalf("%s has mode %v, want %v", args[0], got, want)
	}
}

// cmdSetMode sets a file's mode, special bits included (testscript's chmod drops them):
// setmode PATH 4755.
func cmdSetMode(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "setmode")
	if len(args) != 2 {
		ts.Fatalf("usage: setmode PATH PERM")
	}
	ts.Check(os.Chmod(ts.MkAbs(args[0]), octalMode(ts, args[1])))
}

// cmdChown gives a file to an owner and group: chown PATH UID GID (as root: guard it with [root]).
func cmdChown(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "chown")
	if len(args) != 3 {
		ts.Fatalf("usage: chown PATH UID GID")
	}
	uid, err := strconv.Atoi(args[1])
	ts.Check(err)
	gid, err := strconv.Atoi(args[2])
	ts.Check(err)
	ts.Check(os.Lchown(ts.MkAbs(args[0]), uid, gid))
}

// cmdOwner asserts a file's owner and group: owner PATH UID GID. Negated, it asserts another
// owner or group.
func cmdOwner(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: owner PATH UID GID")
	}
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	sys := st.Sys().(*syscall.Stat_t)
	got, want := fmt.Sprintf("%d %d", sys.Uid, sys.Gid), args[1]+" "+args[2]
	switch {
	case neg && got == want:
		ts.Fatalf("%s is owned by %s", args[0], got)
	case !neg && got != want:
		ts.Fatalf("%s is owned by %s, want %s", args[0], got, want)
	}
}

// cmdMkfifo makes a named pipe: mkfifo PATH.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "mkfifo")
	if len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

// cmdHoldOpen writes a file into a named pipe and keeps the pipe open for writing until the
// script ends, as a host keeps a server's stdin open: holdopen FIFO FILE. A process reading the
// pipe gets the file's lines and then no end of input.
func cmdHoldOpen(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "holdopen")
	if len(args) != 2 {
		ts.Fatalf("usage: holdopen FIFO FILE")
	}
	// Read and write, so the open does not wait for a reader; what is written waits in the
	// pipe for the reader that comes.
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_RDWR, 0)
	ts.Check(err)
	ts.Defer(func() { f.Close() })
	_, err = f.WriteString(ts.ReadFile(args[1]))
	ts.Check(err)
}

// cmdSeal seals journals as the runs that wrote them would have, under the operator's key in the
// script's state directory, made on first use: seal FILE... (each named RUN_ID.jsonl).
func cmdSeal(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "seal")
	if len(args) == 0 {
		ts.Fatalf("usage: seal FILE...")
	}
	key, err := engine.JournalKey(func(k string) (string, bool) { v := ts.Getenv(k); return v, v != "" }, true)
	ts.Check(err)
	for _, a := range args {
		path := ts.MkAbs(a)
		ts.Check(engine.SealJournal(path, strings.TrimSuffix(filepath.Base(path), ".jsonl"), key))
	}
}

// cmdKeygen writes a signing key and its .pub: keygen FILE.
func cmdKeygen(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "keygen")
	if len(args) != 1 {
		ts.Fatalf("usage: keygen FILE")
	}
	_, err := evals.GenerateKey(ts.MkAbs(args[0]))
	ts.Check(err)
}

// cmdTrust adds a public key file's key to .locum/workspace.json and to the operator's user
// config: trust [-repo-only] FILE.pub (-repo-only: the workspace alone, as a repository would).
func cmdTrust(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "trust")
	repoOnly := len(args) == 2 && args[0] == "-repo-only"
	if repoOnly {
		args = args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: trust [-repo-only] FILE.pub")
	}
	pub, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	key := strings.TrimSpace(string(pub))
	file := ts.MkAbs(".locum/workspace.json")
	ws := map[string]any{"packs": []any{"tools/local-llm"}}
	if data, err := os.ReadFile(file); err == nil {
		ts.Check(json.Unmarshal(data, &ws))
	}
	trust, _ := ws["trust"].(map[string]any)
	if trust == nil {
		trust = map[string]any{}
	}
	keys, _ := trust["keys"].([]any)
	trust["keys"] = append(keys, key)
	ws["trust"] = trust
	data, err := json.MarshalIndent(ws, "", "  ")
	ts.Check(err)
	ts.Check(os.MkdirAll(ts.MkAbs(".locum"), 0o755))
	ts.Check(os.WriteFile(file, data, 0o644))
	if repoOnly {
		return
	}
	// The operator's trust: routing signed by the key earns a role on this machine.
	cfgFile := filepath.Join(ts.Getenv("HOME"), ".config", "locum", "config.json")
	cfg := map[string]any{}
	if data, err := os.ReadFile(cfgFile); err == nil {
		ts.Check(json.Unmarshal(data, &cfg))
	}
	tk, _ := cfg["trust_keys"].([]any)
	cfg["trust_keys"] = append(tk, key)
	data, err = json.MarshalIndent(cfg, "", "  ")
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Dir(cfgFile), 0o700))
	ts.Check(os.WriteFile(cfgFile, data, 0o600))
}

// cmdMkRouting signs a routing file: mkrouting KEYFILE RECORD ROLES.json, where ROLES.json maps
// role names to {enabled, model, effort, tasks}.
func cmdMkRouting(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "mkrouting")
	if len(args) != 3 {
		ts.Fatalf("usage: mkrouting KEYFILE RECORD ROLES.json")
	}
	key, err := evals.LoadPrivateKey(ts.MkAbs(args[0]))
	ts.Check(err)
	sum, err := evals.FileSHA256(ts.MkAbs(args[1]))
	ts.Check(err)
	var r evals.Routing
	r.Version = 1
	r.Record.Path, r.Record.SHA256 = args[1], sum
	data, err := os.ReadFile(ts.MkAbs(args[2]))
	ts.Check(err)
	ts.Check(json.Unmarshal(data, &r.Roles))
	ts.Check(evals.SignRouting(ts.MkAbs("."), r, func(doc map[string]any) error { return evals.Sign(doc, key) }))
}

// cmdResign sets one string field of a signed JSON document and signs it again with a key, as a
// record captured under other conditions would be: resign KEYFILE FILE PATH VALUE, where PATH is
// dot-separated object keys (fingerprints.code).
func cmdResign(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "resign")
	if len(args) != 4 {
		ts.Fatalf("usage: resign KEYFILE FILE PATH VALUE")
	}
	key, err := evals.LoadPrivateKey(ts.MkAbs(args[0]))
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var doc map[string]any
	ts.Check(dec.Decode(&doc))
	obj := doc
	path := strings.Split(args[2], ".")
	for _, k := range path[:len(path)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			ts.Fatalf("resign: %s is not an object", k)
		}
		obj = next
	}
	obj[path[len(path)-1]] = args[3]
	delete(doc, "signature")
	ts.Check(evals.Sign(doc, key))
	out, err := json.MarshalIndent(doc, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), append(out, '\n'), 0o644))
}

// cmdMkRecord writes the part of an A/B record that routing reads back, k = 5 and the shipped
// tasks' fingerprints: mkrecord FILE.
func cmdMkRecord(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "mkrecord")
	if len(args) != 1 {
		ts.Fatalf("usage: mkrecord FILE")
	}
	fps := map[string]string{}
	for _, task := range evals.Tasks() {
		fps[task.ID] = task.Fingerprint()
	}
	data, err := json.Marshal(map[string]any{"k": evals.EarnK, "fingerprints": fps})
	ts.Check(err)
	ts.Check(os.MkdirAll(ts.MkAbs(filepath.Dir(args[0])), 0o755))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

// cmdFlipChar changes the last character of the first match of a regular expression in a file to
// another of its kind (a hex digit stays a hex digit, a base64 character a base64 character), as
// a one-byte edit would: flipchar FILE REGEXP.
func cmdFlipChar(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "flipchar")
	if len(args) != 2 {
		ts.Fatalf("usage: flipchar FILE REGEXP")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	loc := regexp.MustCompile(args[1]).FindIndex(data)
	if loc == nil {
		ts.Fatalf("flipchar: no match for %s in %s", args[1], args[0])
	}
	i := loc[1] - 1
	switch c := data[i]; {
	case c == '9':
		data[i] = '0'
	case c == 'f' || c == 'z':
		data[i] = 'a'
	case c == 'Z':
		data[i] = 'A'
	case c == '+':
		data[i] = '/'
	case c == '/':
		data[i] = '+'
	default:
		data[i] = c + 1
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

// cmdSymbolsJSON checks that stdout is one object of locum symbols --json that holds to
// spec/symbols.schema.json.
func cmdSymbolsJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: symbolsjson")
	}
	v, err := schema.New()
	ts.Check(err)
	_, err = v.Validate(schema.Symbols, "stdout", []byte(ts.ReadFile("stdout")))
	ts.Check(err)
}

// cmdBenchJSON checks that stdout is a bench's result object as spec/bench-result.schema.json
// describes it, its details included.
func cmdBenchJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: benchjson")
	}
	v, err := schema.New()
	ts.Check(err)
	_, err = v.Validate(schema.BenchResult, "stdout", []byte(ts.ReadFile("stdout")))
	ts.Check(err)
}

// cmdResultJSON checks that stdout is exactly one result object that spec/result.schema.json
// accepts: resultjson STATUS KIND (KIND - for none).
func cmdResultJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: resultjson STATUS KIND")
	}
	out := ts.ReadFile("stdout")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 || lines[0] == "" {
		ts.Fatalf("stdout holds %d lines, want one result object:\n%s", len(lines), out)
	}
	v, err := schema.New()
	ts.Check(err)
	doc, err := v.Validate(schema.Result, "stdout", []byte(lines[0]))
	if err != nil {
		ts.Fatalf("stdout is not a result object: %v", err)
	}
	obj := doc.(map[string]any)
	if obj["status"] != args[0] {
		ts.Fatalf("status %v, want %s", obj["status"], args[0])
	}
	kind := "-"
	if e, ok := obj["error"].(map[string]any); ok {
		kind, _ = e["kind"].(string)
	}
	if kind != args[1] {
		ts.Fatalf("error kind %s, want %s", kind, args[1])
	}
}

// cmdSubst edits a file in place the same way on every system (sed -i and its 0,/re/ address are
// GNU's): subst [-once] FILE REGEXP REPLACEMENT, Go regexp syntax. No match fails the script, so a
// tamper can never silently change nothing.
func cmdSubst(ts *testscript.TestScript, neg bool, args []string) {
	once := len(args) > 0 && args[0] == "-once"
	if once {
		args = args[1:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: subst [-once] FILE REGEXP REPLACEMENT")
	}
	re := regexp.MustCompile(args[1])
	data := ts.ReadFile(args[0])
	loc := re.FindStringIndex(data)
	if loc == nil {
		ts.Fatalf("subst: no match for %s in %s", args[1], args[0])
	}
	var out string
	if once {
		out = data[:loc[0]] + re.ReplaceAllString(data[loc[0]:loc[1]], args[2]) + data[loc[1]:]
	} else {
		out = re.ReplaceAllString(data, args[2])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(out), 0o644))
}

// sandboxStopDeadline is how soon every process a stopped verify left must be gone.
const sandboxStopDeadline = 2 * time.Second

// cmdProcGone asserts that within 2 s no process's command line holds PATTERN: procgone PATTERN.
// A process inside the verify's PID namespace has no pid the script can know; its command line
// is seen from outside.
func cmdProcGone(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "procgone")
	if len(args) != 1 {
		ts.Fatalf("usage: procgone PATTERN")
	}
	if waitFor(sandboxStopDeadline, func() bool { return len(processesWith(args[0])) == 0 }) {
		return
	}
	pids := processesWith(args[0])
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	ts.Fatalf("processes %v running %q are still there %s after the run", pids, args[0], sandboxStopDeadline)
}

// waitFor polls cond until it holds, or limit passes; it says whether it held. The limit is
// the outcome only where it is the requirement (sandboxStopDeadline); elsewhere only a hang
// reaches it.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesWith lists the live processes whose command line holds pattern.
func processesWith(pattern string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), pattern) || processGone(pid) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// cmdGoEnv sets GOPATH and GOMODCACHE as the go command of this machine has them, and
// XDG_CACHE_HOME to this machine's cache directory, where a sandboxed verify keeps a Go build
// cache of its own: it stays warm from one test run to the next instead of building the
// standard library each time.
func cmdGoEnv(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "goenv")
	out, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE").Output()
	ts.Check(err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		ts.Fatalf("go env: %q", out)
	}
	for i, k := range []string{"GOPATH", "GOMODCACHE"} {
		ts.Setenv(k, lines[i])
	}
	cache, err := os.UserCacheDir()
	ts.Check(err)
	ts.Setenv("XDG_CACHE_HOME", cache)
}

// cmdPidOf writes to FILE the pid of the one process whose program is named NAME and whose
// command line holds PATTERN: pidof NAME PATTERN FILE. A verify in a PID namespace cannot say
// locum's pid; the script finds it from outside.
func cmdPidOf(ts *testscript.TestScript, neg bool, args []string) {
	refuseNegation(ts, neg, "pidof")
	if len(args) != 3 {
		ts.Fatalf("usage: pidof NAME PATTERN FILE")
	}
	var found []int
	for _, pid := range processesWith(args[1]) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if filepath.Base(argv0) == args[0] {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		ts.Fatalf("pidof %s %q: %d processes %v", args[0], args[1], len(found), found)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(strconv.Itoa(found[0])), 0o644))
}
