package hostusage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
)

// t0 is the start of every test session.
var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func ts(sec float64) string {
	return t0.Add(time.Duration(sec * float64(time.Second))).Format("2006-01-02T15:04:05.000Z")
}

// ln is one transcript line, written as Claude Code writes it.
type ln struct {
	typ, session, uuid, parent string
	at                         float64
	side                       bool
	agent                      string
	msgID, reqID               string
	usage                      *Usage
	blocks                     []map[string]any
	text                       string // a user's plain text
}

func (l ln) json() string {
	m := map[string]any{"type": l.typ, "sessionId": l.session, "uuid": l.uuid, "timestamp": ts(l.at),
		"isSidechain": l.side, "userType": "external", "cwd": "/work/proj", "version": "2.0.31", "gitBranch": "main"}
	if l.parent != "" {
		m["parentUuid"] = l.parent
	} else {
		m["parentUuid"] = nil
	}
	if l.agent != "" {
		m["agentId"] = l.agent
	}
	switch l.typ {
	case "assistant":
		msg := map[string]any{"id": l.msgID, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
			"content": l.blocks, "stop_reason": nil, "stop_sequence": nil}
		if l.usage != nil {
			msg["usage"] = map[string]any{"input_tokens": l.usage.Input, "cache_creation_input_tokens": l.usage.CacheCreation,
				"cache_read_input_tokens": l.usage.CacheRead, "output_tokens": l.usage.Output, "service_tier": "standard",
				"cache_creation": map[string]any{"ephemeral_5m_input_tokens": l.usage.CacheCreation, "ephemeral_1h_input_tokens": 0}}
		}
		m["message"] = msg
		m["requestId"] = l.reqID
	case "user":
		if l.text != "" {
			m["message"] = map[string]any{"role": "user", "content": l.text}
		} else {
			m["message"] = map[string]any{"role": "user", "content": l.blocks}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func bash(id, command string) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": command, "description": "run it"}}
}

func mcp(id, tool string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": "mcp__locum__" + tool, "input": input}
}

func tool(id, name string) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{"file_path": "/work/proj/a.go"}}
}

func result(id string, content any) map[string]any {
	return map[string]any{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": false}
}

func u(in, cw, cr, out int64) *Usage {
	return &Usage{Input: in, CacheCreation: cw, CacheRead: cr, Output: out}
}

// readRaw reads files given as lists of lines, each file in turn.
func readRaw(t *testing.T, lim Limits, files ...[]string) *reader {
	t.Helper()
	if lim == (Limits{}) {
		lim = DefaultLimits()
	}
	r := newReader(lim)
	for i, f := range files {
		require.NoError(t, r.lines(i, strings.NewReader(strings.Join(f, "\n")+"\n")))
	}
	return r
}

func read(t *testing.T, lim Limits, files ...[]string) *Transcripts {
	t.Helper()
	return readRaw(t, lim, files...).finish()
}

func bufioReader(s string, size int) *bufio.Reader {
	return bufio.NewReaderSize(strings.NewReader(s), size)
}

func lines(ls ...ln) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.json())
	}
	return out
}

// One response is several lines, one a content block, with the same ids and usage (the output
// growing as it streams): it is one request, with the figures of its last line.
func TestRequestCountedOnce(t *testing.T) {
	tests := []struct {
		name     string
		files    [][]ln
		requests int
		want     Usage
	}{
		{"one line", [][]ln{{{typ: "assistant", session: "s", uuid: "a1", at: 1, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 40), blocks: []map[string]any{text("hi")}}}},
			1, Usage{3, 100, 2000, 40}},
		{"three blocks, output growing", [][]ln{{
			{typ: "assistant", session: "s", uuid: "a1", at: 1, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 1), blocks: []map[string]any{{"type": "thinking", "thinking": "...", "signature": "x"}}},
			{typ: "assistant", session: "s", uuid: "a2", parent: "a1", at: 2, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 12), blocks: []map[string]any{text("reading it")}},
			{typ: "assistant", session: "s", uuid: "a3", parent: "a2", at: 3, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 87), blocks: []map[string]any{tool("toolu_1", "Read")}},
		}}, 1, Usage{3, 100, 2000, 87}},
		{"two requests", [][]ln{{
			{typ: "assistant", session: "s", uuid: "a1", at: 1, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 40)},
			{typ: "assistant", session: "s", uuid: "a2", parent: "a1", at: 2, msgID: "msg_2", reqID: "req_2", usage: u(1, 50, 2100, 10)},
		}}, 2, Usage{4, 150, 4100, 50}},
		{"copied into another file (a resumed session)", [][]ln{
			{{typ: "assistant", session: "s", uuid: "a1", at: 1, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 40)}},
			{{typ: "assistant", session: "s2", uuid: "b1", at: 1, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 40)},
				{typ: "assistant", session: "s2", uuid: "b2", parent: "b1", at: 5, msgID: "msg_3", reqID: "req_3", usage: u(2, 10, 2200, 5)}},
		}, 2, Usage{5, 110, 4200, 45}},
		{"no request: a synthetic reply, a message without usage", [][]ln{{
			{typ: "assistant", session: "s", uuid: "a1", at: 1, msgID: "msg_9", reqID: "", usage: nil, blocks: []map[string]any{text("API Error")}},
		}}, 0, Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files [][]string
			for _, f := range tt.files {
				files = append(files, lines(f...))
			}
			r := readRaw(t, Limits{}, files...)
			got := r.finish()
			var n int
			var sum Usage
			for _, s := range got.Sessions {
				n += s.Requests
			}
			for _, c := range r.chains[1:] {
				for _, q := range c.requests {
					sum = sum.Add(q.usage)
				}
			}
			assert.Equal(t, tt.requests, n)
			assert.Equal(t, tt.want, sum)
			assert.Zero(t, got.Left)
		})
	}
}

func TestSyntheticIsNoRequest(t *testing.T) {
	l := `{"type":"assistant","sessionId":"s","uuid":"a1","timestamp":"` + ts(1) + `","isApiErrorMessage":true,"message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 529"}],"usage":{"input_tokens":0,"output_tokens":0}},"requestId":"r"}`
	got := read(t, Limits{}, []string{l})
	require.Len(t, got.Sessions, 0)
	assert.Zero(t, got.Left)
}

// A line that is not one transcript line is skipped and counted; the lines after it are read.
func TestBrokenLinesAreCounted(t *testing.T) {
	good := ln{typ: "assistant", session: "s", uuid: "g", at: 9, msgID: "msg_g", reqID: "req_g", usage: u(1, 2, 3, 4)}.json()
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	tests := []struct {
		name string
		line string
		want Left
	}{
		{"not JSON", `{"type":"assistant","usage":`, Left{Lines: 1}},
		{"a key twice", strings.Replace(good, `"type":"assistant"`, `"type":"assistant","type":"user"`, 1), Left{Lines: 1}},
		{"a key twice in another case", strings.Replace(good, `"requestId"`, `"requestID":"x","requestId"`, 1), Left{Lines: 1}},
		{"a usage key twice", strings.Replace(good, `"input_tokens":1`, `"input_tokens":1,"input_tokens":900000`, 1), Left{Lines: 1}},
		{"nested too deep", `{"type":"assistant","usage":` + deep + `}`, Left{Lines: 1}},
		{"a negative usage", strings.Replace(good, `"output_tokens":4`, `"output_tokens":-4`, 1), Left{Lines: 1}},
		{"a fractional usage", strings.Replace(good, `"output_tokens":4`, `"output_tokens":4.5`, 1), Left{Lines: 1}},
		{"an absurd usage", strings.Replace(good, `"output_tokens":4`, `"output_tokens":1e300`, 1), Left{Lines: 1}},
		{"a usage as text", strings.Replace(good, `"output_tokens":4`, `"output_tokens":"4"`, 1), Left{Lines: 1}},
		{"no timestamp", strings.Replace(good, `"timestamp"`, `"time"`, 1), Left{Lines: 1}},
		{"a message that is text", `{"type":"assistant","sessionId":"s","timestamp":"` + ts(1) + `","message":"usage"}`, Left{Lines: 1}},
		{"content that is a number", strings.Replace(good, `"content":null`, `"content":7`, 1), Left{Lines: 1}},
		{"an array", `["usage"]`, Left{Lines: 1}},
		{"too long", `{"type":"assistant","usage":"` + strings.Repeat("x", 2000) + `"}`, Left{LongLines: 1}},
		{"a line that does not matter", `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`, Left{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := DefaultLimits()
			lim.LineBytes = 1024
			got := read(t, lim, []string{tt.line, good})
			assert.Equal(t, tt.want, got.Left)
			require.Len(t, got.Sessions, 1, "the good line after it is read")
			assert.Equal(t, 1, got.Sessions[0].Requests)
		})
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("y", 100)
	tests := []struct {
		in    string
		lines []string
		long  int
	}{
		{"a\nb\n", []string{"a", "b"}, 0},
		{"a\r\nb", []string{"a", "b"}, 0},
		{"a\n" + long + "\nb\n", []string{"a", "b"}, 1},
		{long, nil, 1},
		{"\n\n", []string{"", ""}, 0},
		{"", nil, 0},
	}
	for _, tt := range tests {
		lr := lineReader{r: bufioReader(tt.in, 16), max: 20}
		var got []string
		var long int
		for {
			line, isLong, err := lr.next()
			if isLong {
				long++
			} else if line != nil {
				got = append(got, string(line))
			}
			if err != nil {
				break
			}
		}
		assert.Equal(t, tt.lines, got, "%q", tt.in)
		assert.Equal(t, tt.long, long, "%q", tt.in)
	}
}

func TestLocumTool(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    bool
	}{
		{"Bash", "locum transform --file a.go --lines 1-9 --verify 'go test ./...' 'tidy'", true},
		{"Bash", "cd pkg && locum summarize --file log.txt", true},
		{"Bash", "go run ./cmd/locum dedup --dir docs", true},
		{"Bash", "/usr/local/bin/locum ledger", true},
		{"Bash", "LOCUM_HOST_CONTEXT_TOKENS=60000 locum transform --json", true},
		{"Bash", "locum", true},
		{"Bash", "cat .git/locum/runs/x.jsonl", false},
		{"Bash", "echo locumdev", false},
		{"Bash", "grep -r locum_run .", false},
		{"Read", "locum transform", false},
		{"mcp__locum__transform", "", true},
		{"mcp__locum-dev__run", "", true},
		{"mcp__github__create_issue", "", false},
		{"mcp__locum", "", false},
	}
	for _, tt := range tests {
		input, _ := json.Marshal(map[string]string{"command": tt.command})
		assert.Equal(t, tt.want, locumTool(tt.name, input), "%s %q", tt.name, tt.command)
	}
}

func TestRunIDs(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"OK mode=transform model=m time=9ms saved=+10t(est) run=20261205T100105Z-a1b2c3", []string{"20261205T100105Z-a1b2c3"}},
		{"OK mode=transform run=20261205T100105Z-a1b2c3\nRED mode=transform run=20261205T100107Z-000001", []string{"20261205T100105Z-a1b2c3", "20261205T100107Z-000001"}},
		{`{"status":"RED","mode":"transform","run_id":"20261205T100105Z-a1b2c3"}`, []string{"20261205T100105Z-a1b2c3"}},
		{`{"run_id": "20261205T100105Z-a1b2c3", "x": "run=20261205T100105Z-a1b2c3"}`, []string{"20261205T100105Z-a1b2c3"}},
		{"20261205T100105Z-a1b2c3.jsonl", nil},
		{"parent_run=20261205T100105Z-a1b2c3", nil},
		{"run=20261205T100105Z-A1B2C3", nil},
		{"run=20261205T100105Z-a1b2c3d", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runIDs(tt.text), tt.text)
	}
}

// C around a call is the median context of its chain's requests within Window of it.
func TestContext(t *testing.T) {
	tests := []struct {
		name     string
		contexts []int64
		call     int
		want     int64
	}{
		{"one request", []int64{40000}, 0, 40000},
		{"odd", []int64{10, 30, 20}, 1, 20},
		{"even: the middle two's mean", []int64{10, 20, 30, 40}, 0, 25},
		{"a compaction does not move it", []int64{50000, 51000, 52000, 3000, 53000}, 2, 51000},
		{"only the window", append(append(make([]int64, 0, 40), repeat(1000, 20)...), repeat(90000, 21)...), 40, 90000},
		{"the window's edge", append(repeat(1000, 11), repeat(90000, 10)...), 10, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReader(DefaultLimits())
			r.chains = append(r.chains, &chain{})
			for _, c := range tt.contexts {
				r.chains[1].requests = append(r.chains[1].requests, request{usage: Usage{CacheRead: c}})
			}
			assert.Equal(t, tt.want, r.context(ref{chain: 1, index: int32(tt.call)}))
		})
	}
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestUsage(t *testing.T) {
	x := Usage{Input: 7, CacheCreation: 1000, CacheRead: 40001, Output: 5}
	assert.Equal(t, int64(41008), x.Context())
	assert.Equal(t, int64(41013), x.Tokens())
	var sum Usage
	for i := range 3 {
		sum = sum.Add(x.share(i, 3))
	}
	assert.Equal(t, x, sum, "the shares sum to the whole")
	assert.Equal(t, Usage{3, 334, 13334, 2}, x.share(0, 3))
	assert.Equal(t, Usage{2, 333, 13333, 1}, x.share(2, 3))
	// claude: $3 in, $3.75 cache write, $0.30 cached, $15 out per million.
	assert.InDelta(t, (7*3+1000*3.75+40001*0.3+5*15)/1e6, x.USD(cost.Families["claude"]), 1e-12)
}

func TestStanding(t *testing.T) {
	assert.Equal(t, StandingCost{Requests: 40, Tokens: 40 * 7427}, Standing(Session{Requests: 40, Sidechain: 9, Locum: true}, 7427))
	assert.Zero(t, Standing(Session{Requests: 40}, 7427), "no sign of locum's tools")
	assert.Zero(t, Standing(Session{Requests: 40, Locum: true}, 0), "no tool list size")
}

func TestReadFolder(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	good := strings.Join(lines(ln{typ: "assistant", session: "s", uuid: "a1", at: 1, msgID: "msg_1", reqID: "req_1", usage: u(3, 100, 2000, 40)}), "\n") + "\n"
	write := func(path, data string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	}
	write(filepath.Join(dir, "-work-proj", "s.jsonl"), good)
	write(filepath.Join(dir, "-work-proj", "s", "subagents", "agent-a1.jsonl"), strings.ReplaceAll(good, "msg_1", "msg_2"))
	write(filepath.Join(dir, "-work-proj", "notes.txt"), good)
	write(filepath.Join(outside, "secret.jsonl"), strings.ReplaceAll(good, "msg_1", "msg_3"))
	write(filepath.Join(dir, "-work-proj", "big.jsonl"), strings.ReplaceAll(good, "msg_1", "msg_4")+strings.Repeat(" ", 4096))
	write(filepath.Join(dir, "a", "b", "c", "d", "e", "f", "g", "h", "i", "deep.jsonl"), strings.ReplaceAll(good, "msg_1", "msg_5"))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.jsonl"), filepath.Join(dir, "-work-proj", "out.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "-work-proj", "s.jsonl"), filepath.Join(dir, "in.jsonl")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "linked")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "-work-proj", "fifo.jsonl"), 0o644))
	write(filepath.Join(dir, "old", "o.jsonl"), strings.ReplaceAll(good, "msg_1", "msg_6"))
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "old", "o.jsonl"), old, old))

	lim := DefaultLimits()
	lim.FileBytes = 2048
	got, err := Read(dir, Options{Limits: lim, Since: time.Now().Add(-24 * time.Hour)})
	require.NoError(t, err)
	// Read: the session, its subagent, and the link inside the folder (the same request again,
	// counted once). Left out: the link out, the FIFO, the large file. Passed over: the old one,
	// the one too deep, the link to a folder outside (never followed), the file not *.jsonl.
	assert.Equal(t, 3, got.Files)
	assert.Equal(t, 1, got.Older)
	assert.Equal(t, Left{Files: 3}, got.Left)
	require.Len(t, got.Sessions, 1)
	assert.Equal(t, 2, got.Sessions[0].Requests)

	lim.Files = 1
	got, err = Read(dir, Options{Limits: lim})
	require.NoError(t, err)
	assert.Equal(t, 1, got.Files)

	_, err = Read(filepath.Join(dir, "missing"), Options{})
	assert.Error(t, err)
	_, err = Read(filepath.Join(dir, "-work-proj", "s.jsonl"), Options{})
	assert.ErrorContains(t, err, "is not a folder")
}

// jsonl writes lines as one transcript's bytes.
func jsonl(ls ...ln) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		fmt.Fprintln(&b, l.json())
	}
	return b.Bytes()
}
