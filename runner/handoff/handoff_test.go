package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/evidence"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// realLog is a real log: go vet and go test of github.com/rogpeppe/go-internal v1.16.0 run on
// this project's machine with the module proxy off (testdata/go-internal/README.md, the
// project's licence beside it).
const realLog = "testdata/go-internal/test.log"

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// The gate on a real log, item by item: a reply written as a model writes one (reply.json), each
// item quoting its lines. An item whose quote the log does not hold is unsupported, as is one
// naming a test its lines do not name.
func TestGateOnARealLog(t *testing.T) {
	reply, err := os.ReadFile("testdata/go-internal/reply.json")
	require.NoError(t, err)
	items, err := evidence.ParseHandoff(string(reply))
	require.NoError(t, err)
	got := evidence.GateHandoff(items, evidence.Whole(readLines(t, realLog)), evidence.MaxClaims(120))
	for i, want := range []struct {
		section, verdict string
		lines            [2]int
		reason           string
	}{
		{"work", "supported", [2]int{14, 14}, ""},
		{"done", "supported", [2]int{8, 13}, ""},
		{"open", "supported", [2]int{101, 103}, ""},
		{"open", "supported", [2]int{92, 99}, ""},
		{"open", "unsupported", [2]int{138, 141}, `the quote "panic: runtime error: invalid memory address" is not in lines 138-141`},
		{"files", "supported", [2]int{99, 99}, ""},
		{"commands", "supported", [2]int{14, 14}, ""},
		{"next", "supported", [2]int{101, 103}, ""},
	} {
		require.Less(t, i, len(got))
		assert.Equal(t, want.section, got[i].Section, "item %d", i)
		assert.Equal(t, want.verdict, got[i].Verdict, "item %d %q: %s", i, got[i].Text, got[i].Reason)
		assert.Equal(t, want.lines, got[i].Lines, "item %d", i)
		assert.Contains(t, got[i].Reason, want.reason, "item %d", i)
	}
}

func TestParseTail(t *testing.T) {
	for s, want := range map[string]int{"": 0, " 40 ": 40, "1": 1} {
		n, err := ParseTail(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, n, s)
	}
	for _, s := range []string{"0", "-3", "+4", "ten", "1.5"} {
		_, err := ParseTail(s)
		var bad *engine.BadInputError
		assert.True(t, errors.As(err, &bad), s)
	}
}

// run is one handoff of file in root against a scripted server giving replies.
func run(t *testing.T, root, file string, tail int, flags map[string]string, replies ...scripted.Reply) (*engine.Result, []Item, *scripted.Server) {
	t.Helper()
	s := scripted.New()
	t.Cleanup(s.Close)
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions", replies...)
	all := map[string]string{"base-url": s.BaseURL()}
	for k, v := range flags {
		all[k] = v
	}
	spec := engine.RunSpec{Mode: Mode.Name, Root: root, Settings: runtest.Settings(t, Mode.Name, all), Model: runtest.Model, Routing: "operator",
		JournalPath: filepath.Join(t.TempDir(), "run.jsonl"), Host: &engine.HostSide{CallBytes: 100, ResultBytes: func(*engine.Result) int64 { return 200 }}}
	var items []Item
	res := engine.Execute(context.Background(), spec, Steps(Options{File: file, Tail: tail, Cwd: root, Root: root}, &items))
	return res, items, s
}

func answer(items ...string) scripted.Reply {
	a := `{"handoff":[` + strings.Join(items, ",") + `]}`
	return scripted.Reply{StreamAnswer: &a}
}

// logRoot is a repository holding the real log as build.log.
func logRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	data, err := os.ReadFile(realLog)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.log"), data, 0o644))
	return root
}

const latest = `{"section":"open","text":"TestLatest fails: it got v1.0.0 and wants v1.1.0.","quote":"got version \"v1.0.0\", want \"v1.1.0\"","lines":[101,103]}`

func TestHandoffRuns(t *testing.T) {
	data, err := os.ReadFile(realLog)
	require.NoError(t, err)
	lines := readLines(t, realLog)
	for _, tc := range []struct {
		name    string
		tail    int
		flags   map[string]string
		replies []scripted.Reply
		// status, and the count of supported items where the run reached the gate.
		status    engine.Status
		supported int
		// prompt is a line the request's prompt holds.
		prompt string
	}{
		{"the whole log", 0, nil, []scripted.Reply{answer(latest)}, engine.StatusOK, 1, "Lines 1-145 of 145:"},
		{"its last lines, numbered as the file numbers them", 50, nil, []scripted.Reply{answer(latest)}, engine.StatusOK, 1, "Lines 96-145 of 145:\\n96| "},
		{"a citation before the tail", 40, nil, []scripted.Reply{answer(latest)}, engine.StatusRed, 0, "Lines 106-145 of 145:"},
		{"a reply that does not parse, then one that does", 0, nil, []scripted.Reply{runtest.Answer("the build failed"), answer(latest)}, engine.StatusOK, 1, "Your previous reply could not be used"},
		{"twice not the object", 0, nil, []scripted.Reply{runtest.Answer(`{"summary":"x"}`)}, engine.StatusError, -1, ""},
		{"no item", 0, nil, []scripted.Reply{answer()}, engine.StatusRed, 0, ""},
		{"a server that refuses response_format", 0, nil, []scripted.Reply{{Status: 400, JSON: json.RawMessage(`{"error":{"message":"'response_format' of type 'json_schema' is not supported"}}`)}, answer(latest)}, engine.StatusOK, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, items, s := run(t, logRoot(t), "build.log", tc.tail, tc.flags, tc.replies...)
			require.Equal(t, tc.status, res.Status, "%+v", res.Error)
			if tc.supported >= 0 {
				n := 0
				for _, it := range items {
					if it.Supported() {
						n++
					}
				}
				assert.Equal(t, tc.supported, n)
			}
			if tc.prompt != "" {
				reqs := s.RequestsTo("/v1/chat/completions")
				require.NotEmpty(t, reqs)
				assert.Contains(t, string(reqs[len(reqs)-1].Body), tc.prompt)
			}
			if res.Status == engine.StatusOK {
				// The counterfactual: the host reads the lines the handoff read, in one turn.
				read := len(data)
				if tc.tail > 0 {
					read = len(strings.Join(lines[len(lines)-tc.tail:], "\n")) + 1
				}
				require.NotNil(t, res.Host)
				assert.Equal(t, int64(read), res.Host.Parts.Read)
				assert.Equal(t, cost.Turns{Direct: 1, Delegated: 1}, res.Host.Parts.Turns)
			}
		})
	}
}

// A file, or a tail, over the input budget is refused before any request, with the most last
// lines whose prompt fits: that many run, one more is refused.
func TestOverTheBudgetNamesTheTailThatFits(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail int
		what string
	}{
		{"the whole file", 0, "build.log is 7777 bytes, over the input budget of 4000 bytes"},
		{"a tail", 120, "the last 120 lines of build.log is over the input budget of 4000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := logRoot(t)
			flags := map[string]string{"max-input-bytes": "4000"}
			res, _, s := run(t, root, "build.log", tc.tail, flags, answer(latest))
			require.Equal(t, engine.StatusRefused, res.Status)
			require.NotNil(t, res.Error)
			assert.Equal(t, "input_budget", res.Error.Kind)
			msg := res.Error.Message
			assert.Contains(t, msg, tc.what)
			var fits int
			_, err := fmt.Sscanf(msg[strings.Index(msg, "--tail "):], "--tail %d", &fits)
			require.NoError(t, err, msg)
			assert.Empty(t, s.RequestsTo("/v1/chat/completions"), "refused before any request")

			res, _, _ = run(t, root, "build.log", fits, flags, answer(latest))
			assert.NotEqual(t, engine.StatusRefused, res.Status, "--tail %d fits: %+v", fits, res.Error)
			res, _, _ = run(t, root, "build.log", fits+1, flags, answer(latest))
			assert.Equal(t, engine.StatusRefused, res.Status, "--tail %d does not fit", fits+1)
		})
	}
}

func TestRefusals(t *testing.T) {
	root := logRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "empty.log"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "long.log"), []byte("a\n"+strings.Repeat("x", 5000)+"\n"), 0o644))
	for _, tc := range []struct {
		name, file string
		tail       int
		status     engine.Status
		want       string
	}{
		{"an empty file", "empty.log", 0, engine.StatusError, "empty.log is empty: there is nothing to hand over"},
		{"no such file", "none.log", 0, engine.StatusError, "none.log: no such file"},
		{"a last line over the budget", "long.log", 1, engine.StatusRefused, "not even its last line fits in it"},
		{"a negative tail", "build.log", -1, engine.StatusError, "--tail -1: want a number of lines from 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, s := run(t, root, tc.file, tc.tail, map[string]string{"max-input-bytes": "4000"}, answer(latest))
			assert.Equal(t, tc.status, res.Status)
			require.NotNil(t, res.Error)
			assert.Contains(t, res.Error.Message, tc.want)
			assert.Empty(t, s.RequestsTo("/v1/chat/completions"))
		})
	}
}
