package hostusage

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func run(id string, start, end float64) Run {
	return Run{ID: id, Start: t0.Add(time.Duration(start * float64(time.Second))), End: t0.Add(time.Duration(end * float64(time.Second)))}
}

func asst(uuid, parent string, at float64, msg string, use *Usage, blocks ...map[string]any) ln {
	return ln{typ: "assistant", session: "s", uuid: uuid, parent: parent, at: at, msgID: msg, reqID: "req_" + msg, usage: use, blocks: blocks}
}

func res(uuid, parent string, at float64, blocks ...map[string]any) ln {
	return ln{typ: "user", session: "s", uuid: uuid, parent: parent, at: at, blocks: blocks}
}

func side(l ln, agent string) ln {
	l.side, l.agent = true, agent
	return l
}

// want is what a test expects of one joined run.
type want struct {
	toolUse   string
	call      Usage
	read      Usage
	reads     bool
	sidechain bool
	context   int64
}

// A request joined to the wrong run is a wrong figure in the ledger: each case holds every run
// to the call that made it, and to the requests that made and read it.
func TestJoinHoldsEachRunToItsCall(t *testing.T) {
	a1, a2, a3 := u(2, 100, 40000, 50), u(3, 200, 40100, 60), u(1, 50, 40300, 30)
	tests := []struct {
		name  string
		files [][]ln
		runs  []Run
		want  map[string]want
	}{{
		name: "two runs in one session: the request that read the first result made the second call, and is shared",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", a1, bash("toolu_1", "locum transform --file a.go --lines 1-9 --verify true 'x'")),
			res("u1", "a1", 20, result("toolu_1", "transform: kept a.go\nOK mode=transform run=20261205T100002Z-00000a")),
			asst("a2", "u1", 22, "msg_2", a2, bash("toolu_2", "locum transform --file b.go --lines 1-9 --verify true 'y'")),
			res("u2", "a2", 40, result("toolu_2", "RED mode=transform run=20261205T100023Z-00000b")),
			asst("a3", "u2", 42, "msg_3", a3, text("it went red")),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 18), run("20261205T100023Z-00000b", 23, 38)},
		want: map[string]want{
			"20261205T100002Z-00000a": {toolUse: "toolu_1", call: *a1, read: a2.share(0, 2), reads: true, context: 40303},
			"20261205T100023Z-00000b": {toolUse: "toolu_2", call: a2.share(1, 2), read: *a3, reads: true, context: 40303},
		},
	}, {
		name: "two calls in one response, their results in the other order",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", u(2, 100, 40000, 10), text("both at once")),
			asst("a1b", "a1", 1.2, "msg_1", u(2, 100, 40000, 30), mcp("toolu_A", "transform", map[string]any{"file": "a.go"})),
			asst("a1c", "a1b", 1.4, "msg_1", a1, mcp("toolu_B", "transform", map[string]any{"file": "b.go"})),
			res("uB", "a1c", 30, result("toolu_B", []map[string]any{text("OK transform: kept b.go run=20261205T100003Z-00000b")})),
			res("uA", "uB", 31, result("toolu_A", []map[string]any{text("OK transform: kept a.go run=20261205T100002Z-00000a")})),
			asst("a2", "uA", 33, "msg_2", a2, text("both kept")),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 29), run("20261205T100003Z-00000b", 3, 25)},
		want: map[string]want{
			"20261205T100002Z-00000a": {toolUse: "toolu_A", call: a1.share(0, 2), read: a2.share(0, 2), reads: true, context: (40102 + 40303) / 2},
			"20261205T100003Z-00000b": {toolUse: "toolu_B", call: a1.share(1, 2), read: a2.share(1, 2), reads: true, context: (40102 + 40303) / 2},
		},
	}, {
		name: "a run id quoted in a later call's result is not that call's run",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", a1, bash("toolu_1", "locum transform --json --file a.go --lines 1-9 --verify true 'x'")),
			res("u1", "a1", 20, result("toolu_1", `{"status":"OK","mode":"transform","run_id":"20261205T100002Z-00000a"}`)),
			asst("a2", "u1", 22, "msg_2", a2, bash("toolu_2", "locum runs show 20261205T100002Z-00000a")),
			res("u2", "a2", 23, result("toolu_2", "OK mode=transform run=20261205T100002Z-00000a")),
			asst("a3", "u2", 25, "msg_3", a3, mcp("toolu_3", "runs_show", map[string]any{"run_id": "20261205T100002Z-00000a"})),
			res("u3", "a3", 26, result("toolu_3", []map[string]any{text(`"run_id": "20261205T100002Z-00000a"`)})),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 18)},
		want: map[string]want{
			"20261205T100002Z-00000a": {toolUse: "toolu_1", call: *a1, read: *a2, reads: true, context: 40303},
		},
	}, {
		name: "a run whose own result was not read is not joined to a later quote of it",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", a1, bash("toolu_1", "locum transform --file a.go --lines 1-9 --verify true 'x'")),
			asst("a2", "a1", 22, "msg_2", a2, bash("toolu_2", "locum runs show 20261205T100002Z-00000a")),
			res("u2", "a2", 23, result("toolu_2", "OK mode=transform run=20261205T100002Z-00000a")),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 18)},
		want: map[string]want{},
	}, {
		name: "a run outside its call's time is not the call's",
		files: [][]ln{{
			asst("a1", "", 100, "msg_1", a1, bash("toolu_1", "locum transform --file a.go --lines 1-9 --verify true 'x'")),
			res("u1", "a1", 120, result("toolu_1", "OK run=20261205T100002Z-00000a run=20261205T100200Z-00000c")),
		}},
		// One started long before the call, one ended long after its result.
		runs: []Run{run("20261205T100002Z-00000a", 2, 18), run("20261205T100200Z-00000c", 101, 200)},
		want: map[string]want{},
	}, {
		name: "a subagent's call is joined to the subagent's requests, not the main chain's",
		files: [][]ln{{
			asst("m1", "", 1, "msg_m1", u(5, 1000, 50000, 100), map[string]any{"type": "tool_use", "id": "toolu_T", "name": "Task",
				"input": map[string]any{"description": "screen the ADRs", "prompt": "run locum dedup on docs/adr", "subagent_type": "general-purpose"}}),
			res("m2", "m1", 16, result("toolu_T", []map[string]any{text("found one group (dedup run=20261205T100004Z-00000d)")})),
			asst("m3", "m2", 18, "msg_m3", u(3, 400, 51000, 80), text("one group")),
		}, {
			side(ln{typ: "user", session: "s", uuid: "s0", at: 2, text: "run locum dedup on docs/adr"}, "x1"),
			side(asst("s1", "s0", 3, "msg_s1", u(8, 5000, 9000, 90), bash("toolu_S", "locum dedup --dir docs/adr")), "x1"),
			side(res("s2", "s1", 12, result("toolu_S", "dedup files=40 pairs=1 groups=1\nOK mode=dedup run=20261205T100004Z-00000d")), "x1"),
			side(asst("s3", "s2", 14, "msg_s2", u(4, 600, 15000, 150), text("one group: 0036 and 0038")), "x1"),
		}},
		runs: []Run{run("20261205T100004Z-00000d", 4, 10)},
		want: map[string]want{
			"20261205T100004Z-00000d": {toolUse: "toolu_S", sidechain: true, call: Usage{8, 5000, 9000, 90}, read: Usage{4, 600, 15000, 150}, reads: true, context: (14008 + 15604) / 2},
		},
	}, {
		name: "two subagents interleaved in one file: each result is read by its own subagent's next request",
		files: [][]ln{{
			side(asst("x1", "", 1, "msg_x1", u(1, 100, 9000, 10), bash("toolu_X", "locum summarize --file log.txt")), "x"),
			side(asst("y1", "", 1.5, "msg_y1", u(1, 100, 8000, 10), tool("toolu_Y", "Read")), "y"),
			side(res("x2", "x1", 10, result("toolu_X", "OK mode=summarize run=20261205T100002Z-00000a")), "x"),
			side(res("y2", "y1", 10.5, result("toolu_Y", "package a")), "y"),
			side(asst("y3", "y2", 11, "msg_y3", u(2, 200, 8100, 20), text("read it")), "y"),
			side(asst("x3", "x2", 12, "msg_x3", u(3, 300, 9100, 30), text("summarized")), "x"),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 9)},
		want: map[string]want{
			"20261205T100002Z-00000a": {toolUse: "toolu_X", sidechain: true, call: Usage{1, 100, 9000, 10}, read: Usage{3, 300, 9100, 30}, reads: true, context: (9101 + 9403) / 2},
		},
	}, {
		name: "where two calls' results name a run, the one made last before it started made it",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", a1, bash("toolu_1", "locum runs list --json --since 1h; sleep 60; locum runs list --json")),
			asst("a2", "a1", 2, "msg_2", a2, bash("toolu_2", "locum transform --json --file a.go --lines 1-9 --verify true 'x'")),
			res("u2", "a2", 20, result("toolu_2", `{"run_id":"20261205T100003Z-00000a"}`)),
			res("u1", "u2", 61, result("toolu_1", `[{"run_id":"20261205T100003Z-00000a"}]`)),
			asst("a3", "u1", 62, "msg_3", a3, text("done")),
		}},
		runs: []Run{run("20261205T100003Z-00000a", 3, 18)},
		want: map[string]want{
			"20261205T100003Z-00000a": {toolUse: "toolu_2", call: *a2, read: *a3, reads: true, context: 40303},
		},
	}, {
		name: "a result no request read yet: the call alone",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", a1, mcp("toolu_1", "summarize", map[string]any{"file": "log.txt"})),
			res("u1", "a1", 20, result("toolu_1", []map[string]any{text("OK summarize run=20261205T100002Z-00000a")})),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 18)},
		want: map[string]want{
			"20261205T100002Z-00000a": {toolUse: "toolu_1", call: *a1, context: 40102},
		},
	}, {
		name: "a run id in a call that is not locum's, or unknown to the journals",
		files: [][]ln{{
			asst("a1", "", 1, "msg_1", a1, tool("toolu_1", "Read"), bash("toolu_2", "cat notes.txt")),
			res("u1", "a1", 20, result("toolu_1", "run=20261205T100002Z-00000a"), result("toolu_2", "run=20261205T100002Z-00000a")),
			asst("a2", "u1", 22, "msg_2", a2, bash("toolu_3", "locum transform --file a.go --lines 1-2 --verify true x")),
			res("u2", "a2", 30, result("toolu_3", "OK run=20261205T100023Z-00000f")),
		}},
		runs: []Run{run("20261205T100002Z-00000a", 2, 18)},
		want: map[string]want{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files [][]string
			for _, f := range tt.files {
				files = append(files, lines(f...))
			}
			tr := read(t, Limits{}, files...)
			assert.Zero(t, tr.Left)
			got := map[string]want{}
			for _, j := range tr.Join(tt.runs, Tolerance) {
				got[j.Run] = want{toolUse: j.ToolUseID, call: j.Call, read: j.Read, reads: j.Reads, sidechain: j.Sidechain, context: j.Context}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// Every call of locum is found, with its result's run ids and the time of each side.
func TestCalls(t *testing.T) {
	tr := read(t, Limits{}, lines(
		asst("a1", "", 1, "msg_1", u(1, 2, 3, 4), bash("toolu_1", "locum transform --file a.go"), tool("toolu_2", "Edit")),
		res("u1", "a1", 5, result("toolu_1", "OK run=20261205T100002Z-00000a"), result("toolu_2", "ok")),
		asst("a2", "u1", 6, "msg_2", u(1, 2, 3, 4), mcp("toolu_3", "status", map[string]any{})),
	))
	require.Len(t, tr.Calls, 2)
	assert.Equal(t, "toolu_1", tr.Calls[0].ToolUseID)
	assert.Equal(t, "Bash", tr.Calls[0].Tool)
	assert.Equal(t, []string{"20261205T100002Z-00000a"}, tr.Calls[0].RunIDs)
	assert.Equal(t, t0.Add(time.Second), tr.Calls[0].At)
	assert.Equal(t, t0.Add(5*time.Second), tr.Calls[0].ResultAt)
	assert.True(t, tr.Calls[0].Reads)
	assert.Equal(t, "mcp__locum__status", tr.Calls[1].Tool)
	assert.True(t, tr.Calls[1].ResultAt.IsZero())
	require.Len(t, tr.Sessions, 1)
	assert.True(t, tr.Sessions[0].Locum, "the session called a tool of locum's MCP server")
	assert.Equal(t, 2, tr.Sessions[0].Requests)
}

// The recorded-shaped fixture: every call of locum it holds is found, with its requests.
func TestRecordedTranscripts(t *testing.T) {
	tr, err := Read(filepath.Join("testdata", "claude"), Options{})
	require.NoError(t, err)
	assert.Equal(t, 3, tr.Files)
	assert.Equal(t, Left{Lines: 1}, tr.Left, "the torn last line")
	require.Len(t, tr.Sessions, 2)
	a, b := tr.Sessions[0], tr.Sessions[1]
	assert.Equal(t, Session{ID: "7f3c2a9e-4b1d-4e8a-9c2f-1a5b6d7e8f90", Requests: 6, Sidechain: 2, Locum: true,
		First: at("10:00:03.120"), Last: at("10:02:55.300")}, a)
	assert.Equal(t, Session{ID: "c0ffee00-1234-4abc-8def-0123456789ab", Requests: 5, Locum: true,
		First: at("14:00:05.000"), Last: at("14:01:55.000")}, b)
	var tools []string
	for _, c := range tr.Calls {
		tools = append(tools, c.ToolUseID+" "+c.Tool+" "+strings.Join(c.RunIDs, ","))
	}
	assert.Equal(t, []string{
		"toolu_01Bash0000000000000002 Bash 20261126T100105Z-a1b2c3",
		"toolu_01Mcp00000000000000003 mcp__locum__summarize 20261126T100130Z-d4e5f6",
		"toolu_01Bash00000000000000s1 Bash 20261126T100222Z-0a0b0c",
		"toolu_01Bash0000000000000005 Bash 20261126T100105Z-a1b2c3",
		"toolu_01McpB000000000000001 mcp__locum__transform 20261126T140010Z-b10001",
		"toolu_01McpB000000000000002 mcp__locum__transform 20261126T140011Z-b20002",
		"toolu_01BashB00000000000003 Bash 20261126T140120Z-b30003",
	}, tools)
}

func at(clock string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, "2026-11-26T"+clock+"Z")
	if err != nil {
		panic(err)
	}
	return t
}
