package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptOutcome is a testscript.T that runs one script in the calling goroutine and records
// whether it failed, so a test can assert that a script fails.
type scriptOutcome struct {
	failed bool
	log    strings.Builder
}

// stopScript unwinds a script that failed or skipped; Run recovers it.
type stopScript struct{}

func (o *scriptOutcome) Skip(args ...any)  { o.Log(args...); panic(stopScript{}) }
func (o *scriptOutcome) Fatal(args ...any) { o.Log(args...); o.FailNow() }
func (o *scriptOutcome) FailNow()          { o.failed = true; panic(stopScript{}) }
func (o *scriptOutcome) Parallel()         {}
func (o *scriptOutcome) Verbose() bool     { return false }
func (o *scriptOutcome) Log(args ...any)   { fmt.Fprintln(&o.log, args...) }
func (o *scriptOutcome) Run(_ string, f func(testscript.T)) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopScript); !ok {
				panic(r)
			}
		}
	}()
	f(o)
}

// runScript runs one script with the acceptance suite's commands and says whether it passed,
// with its log.
func runScript(t *testing.T, script string) (bool, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.txtar")
	require.NoError(t, os.WriteFile(file, []byte(script), 0o644))
	p := scriptParams()
	p.Files = []string{file}
	p.WorkdirRoot = t.TempDir()
	var o scriptOutcome
	testscript.RunT(&o, p)
	return !o.failed, o.log.String()
}

// A negated assertion fails where the plain one holds, and passes where it fails; a negated
// action is refused, never run as if the ! were not there.
func TestCustomCommandsHonourNegation(t *testing.T) {
	t.Parallel()
	const files = "-- f --\nx\n"
	live := "! exec sh -c 'echo $$ > live.tmp; mv live.tmp live.pid; exec sleep 60' &\nwaitfile live.pid\n"
	gone := "exec sh -c 'echo $$ > gone.pid'\n"
	cases := []struct {
		name   string
		script string
		pass   bool
		log    string // part of the failure's log; "" when the script passes
	}{
		{"mode holds", "chmod 0640 f\nmode f 0640\n", true, ""},
		{"! mode where mode holds", "chmod 0640 f\n! mode f 0640\n", false, "has mode -rw-r-----"},
		{"! mode where it differs", "chmod 0640 f\n! mode f 0644\n", true, ""},
		{"owner holds", "owner f " + ids() + "\n", true, ""},
		{"! owner where owner holds", "! owner f " + ids() + "\n", false, "is owned by"},
		{"! owner where it differs", "! owner f 4242 4242\n", true, ""},
		{"pidgone on an ended process", gone + "pidgone gone.pid\n", true, ""},
		{"! pidgone on an ended process", gone + "! pidgone gone.pid\n", false, "has ended"},
		{"! pidgone on a running process", live + "! pidgone live.pid\nsignal KILL live.pid\nwait\n", true, ""},
		{"! waitfile", "! waitfile f\n", false, "unsupported: ! waitfile"},
		{"! waitgrep", "! waitgrep x f\n", false, "unsupported: ! waitgrep"},
		{"! signal", live + "! signal KILL live.pid\n", false, "unsupported: ! signal"},
		{"! setmode", "! setmode f 0600\n", false, "unsupported: ! setmode"},
		{"! chown", "! chown f 0 0\n", false, "unsupported: ! chown"},
		{"! mkfifo", "! mkfifo p\n", false, "unsupported: ! mkfifo"},
		{"! keygen", "! keygen k\n", false, "unsupported: ! keygen"},
		{"! trust", "! trust f\n", false, "unsupported: ! trust"},
		{"! mkrouting", "! mkrouting a b c\n", false, "unsupported: ! mkrouting"},
		{"! resign", "! resign a b c d\n", false, "unsupported: ! resign"},
		{"! mkrecord", "! mkrecord r.json\n", false, "unsupported: ! mkrecord"},
		{"! flipchar", "! flipchar f x\n", false, "unsupported: ! flipchar"},
		{"! exits", "! exits 0 true\n", false, "unsupported: ! exits"},
		{"! serve", "! serve -refused\n", false, "unsupported: ! serve"},
		{"! subst", "! subst f x y\n", false, "usage: subst"},
		{"! resultjson", "! resultjson OK -\n", false, "usage: resultjson"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pass, log := runScript(t, tc.script+files)
			assert.Equal(t, tc.pass, pass, "log:\n%s", log)
			if tc.log != "" {
				assert.Contains(t, log, tc.log)
			}
		})
	}
}

// ids is this process's uid and gid, as owner takes them.
func ids() string { return fmt.Sprintf("%d %d", os.Getuid(), os.Getgid()) }
