package evals

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
)

// claudeResult is the result object `claude -p --output-format json` prints, in the shape
// Claude Code documents, with the fields locum ignores beside the ones it reads.
func claudeResult(answer string, turns, input, cacheWrite, cacheRead, output int64, usd string) string {
	a, _ := json.Marshal(answer)
	return fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"duration_ms":5321,"duration_api_ms":5102,"num_turns":%d,`+
		`"result":%s,"stop_reason":"end_turn","session_id":"0e639165-79b1-4bd4-bb0f-4cb4c15115d4","total_cost_usd":%s,`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,`+
		`"server_tool_use":{"web_search_requests":0},"service_tier":"standard"},`+
		`"modelUsage":{"claude-sonnet":{"inputTokens":%d,"outputTokens":%d,"costUSD":%s}},"permission_denials":[],"uuid":"u"}`,
		turns, a, usd, input, cacheWrite, cacheRead, output, input, output, usd)
}

func TestReadHostResult(t *testing.T) {
	measured := func(turns, input, cw, cr, out int64, usd float64) *HostUsage {
		return &HostUsage{Method: MethodMeasured, NumTurns: turns, InputTokens: input, CacheCreationInputTokens: cw, CacheReadInputTokens: cr, OutputTokens: out, TotalCostUSD: usd}
	}
	good := claudeResult("the answer\n```go\nfunc F() {}\n```\n", 3, 12, 2345, 45000, 800, "0.0421")
	goCode := "func Load(path string) (*Store, error) {\n\treturn nil, nil\n}\n"
	deep := `{"type":"result","result":"x","num_turns":1,"total_cost_usd":0,"usage":{"input_tokens":1,"output_tokens":1},"x":` +
		strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"
	cases := []struct {
		name     string
		output   string
		answer   string // "=" means the output itself
		usage    *HostUsage
		noteLike string // "" means no note
	}{
		{"plain text", "no\n", "=", nil, ""},
		{"empty", "", "=", nil, ""},
		{"Go code ending in a brace", goCode, "=", nil, ""},
		{"text whose last line is in braces", "x := 1\n{ y }", "=", nil, ""},
		{"a broken object that names no result", `{"usage": {"input_tokens": 1}, "usage": 2}`, "=", nil, ""},
		{"a JSON answer that is no result object", `{"answer": 42}`, "=", nil, ""},
		{"claude -p --output-format json", good + "\n", "the answer\n```go\nfunc F() {}\n```\n", measured(3, 12, 2345, 45000, 800, 0.0421), ""},
		{"printed indented", "{\n  \"type\": \"result\",\n  \"result\": \"ok\",\n  \"num_turns\": 1,\n  \"total_cost_usd\": 0.5,\n  \"usage\": {\"input_tokens\": 2, \"output_tokens\": 3}\n}\n",
			"ok", measured(1, 2, 0, 0, 3, 0.5), ""},
		{"stream-json: the last line is the result", `{"type":"system","subtype":"init"}` + "\n" + `{"type":"assistant","message":{}}` + "\n" + good + "\n",
			"the answer\n```go\nfunc F() {}\n```\n", measured(3, 12, 2345, 45000, 800, 0.0421), ""},
		{"no cache figures, or null ones", `{"type":"result","result":"r","num_turns":2,"total_cost_usd":1e-3,"usage":{"input_tokens":5,"cache_read_input_tokens":null,"output_tokens":6}}`,
			"r", measured(2, 5, 0, 0, 6, 0.001), ""},
		{"an error result still cost its turns", `{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":30,"total_cost_usd":2.5,"usage":{"input_tokens":1,"output_tokens":1}}`,
			"", measured(30, 1, 0, 0, 1, 2.5), ""},
		{"minus zero dollars", `{"type":"result","result":"r","num_turns":0,"total_cost_usd":-0,"usage":{"input_tokens":0,"output_tokens":0}}`,
			"r", measured(0, 0, 0, 0, 0, 0), ""},
		{"a key named twice", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1},"usage":{"input_tokens":9,"output_tokens":9}}`,
			"=", nil, `duplicate key "usage"`},
		{"keys that differ in case", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1,"Output_tokens":9}}`,
			"=", nil, "differ only in letter case"},
		{"a negative count", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":-1,"output_tokens":1}}`,
			"r", nil, "usage.input_tokens is -1, not a whole number"},
		{"a count with a fraction", `{"type":"result","result":"r","num_turns":1.5,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1}}`,
			"r", nil, "num_turns is 1.5"},
		{"a count past its bound", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":1000000000001,"output_tokens":1}}`,
			"r", nil, "not a whole number from 0 to 1000000000000"},
		{"a count past int64", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":99999999999999999999999,"output_tokens":1}}`,
			"r", nil, "usage.input_tokens is 99999999999999999999999"},
		{"a cost past float64", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":1e400,"usage":{"input_tokens":1,"output_tokens":1}}`,
			"r", nil, "total_cost_usd is 1e400"},
		{"a negative cost", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":-0.01,"usage":{"input_tokens":1,"output_tokens":1}}`,
			"r", nil, "total_cost_usd is -0.01"},
		{"a cost as a string", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":"0.01","usage":{"input_tokens":1,"output_tokens":1}}`,
			"r", nil, `total_cost_usd is "0.01"`},
		{"no cost", `{"type":"result","result":"r","num_turns":1,"usage":{"input_tokens":1,"output_tokens":1}}`,
			"r", nil, "it has no total_cost_usd"},
		{"no usage", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1}`, "r", nil, "has no usage object"},
		{"usage not an object", `{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":[1]}`, "r", nil, "has no usage object"},
		{"result not a string", `{"type":"result","result":{"a":1},"num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1}}`,
			"", nil, "its result is not a string"},
		{"broken JSON", `{"type":"result","result":"r",}`, "=", nil, "could not read for its usage"},
		{"nested too deeply", deep, "=", nil, "nested deeper than 64"},
		{"huge", `{"type":"result","result":"` + strings.Repeat("a", MaxHostResultBytes) + `"}`, "=", nil, "more than the 4 MiB locum reads"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ReadHostResult(tc.output)
			want := tc.answer
			if want == "=" {
				want = tc.output
			}
			assert.Equal(t, want, got.Answer)
			assert.Equal(t, tc.usage, got.Usage)
			if tc.noteLike == "" {
				assert.Empty(t, got.Note)
			} else {
				assert.Contains(t, got.Note, tc.noteLike)
				assert.LessOrEqual(t, len(got.Note), maxUsageNote)
			}
		})
	}
}

// captureWithHost captures k=1 against the scripted server answering every task well, with a
// host script that prints, per task, what out maps the task to.
func captureWithHost(t *testing.T, out map[string]string) (CaptureOptions, *Record) {
	t.Helper()
	srv := scripted.New()
	t.Cleanup(srv.Close)
	require.NoError(t, srv.Mimic("lmstudio"))
	srv.On("GET", "/v1/models", listed("scripted-not-a-model", "organization_owner"))
	var replies []scripted.Reply
	for _, task := range Tasks() {
		replies = append(replies, scripted.Reply{Answer: goodAnswer(t, task.ID)})
	}
	srv.On("POST", "/v1/chat/completions", replies...)
	o := captureSetup(t, srv, 1, nil)
	dir := t.TempDir()
	for task, text := range out {
		require.NoError(t, os.WriteFile(filepath.Join(dir, task+".out"), []byte(text), 0o644))
	}
	host := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(host, []byte("#!/bin/sh\nfor last; do :; done\n"+
		"if [ \"$last\" = --version ]; then echo '2.0.0 (Claude Code)'; exit 0; fi\n"+
		"case \"$last\" in\n  *\"package store\"*) cat "+dir+"/code.out ;;\n  *\"review notes\"*) cat "+dir+"/codify.out ;;\n"+
		"  *\"package shapes\"*) cat "+dir+"/agent.out ;;\n  *) cat "+dir+"/handoff.out ;;\nesac\n"), 0o755))
	o.Host = HostCommand{Argv: []string{host, "-p", "--output-format", "json"}}
	rec, err := Capture(context.Background(), o)
	require.NoError(t, err)
	return o, rec
}

// claudeOutputs are result objects answering each task well: task i (in task order) took i+2
// turns, 40000+i cache-read tokens and $0.0(i+1)5.
func claudeOutputs(t *testing.T) map[string]string {
	out := map[string]string{}
	for i, task := range Tasks() {
		out[task.ID] = claudeResult(*goodAnswer(t, task.ID), int64(i+2), 10, 2000, int64(40000+i), 500, fmt.Sprintf("0.0%d5", i+1)) + "\n"
	}
	return out
}

func hostTurn(rec *Record, task string) Turn {
	for _, t := range rec.Turns {
		if t.Arm == ArmHost && t.Task == task {
			return t
		}
	}
	return Turn{}
}

func verifyFails(t *testing.T, o CaptureOptions) []string {
	t.Helper()
	sv, err := schema.New()
	require.NoError(t, err)
	v, err := VerifyRecord(sv, o.Root, o.Name, []string{FormatPublicKey(o.Key.Public().(ed25519.PublicKey))}, o.Roles, false)
	require.NoError(t, err)
	var fails []string
	for _, f := range v.Findings {
		if f.Fail {
			fails = append(fails, f.Text)
		}
	}
	return fails
}

// A host that prints Claude Code's result object: the record holds each host turn's usage,
// measured, the cells its sums, the register its means; the answer graded is the result text;
// and the record verifies.
func TestCaptureRecordsTheHostArmsUsage(t *testing.T) {
	o, rec := captureWithHost(t, claudeOutputs(t))
	assert.Equal(t, 2, rec.Version)
	code := hostTurn(rec, "code")
	require.NotNil(t, code.HostUsage)
	assert.Equal(t, HostUsage{Method: MethodMeasured, NumTurns: 2, InputTokens: 10, CacheCreationInputTokens: 2000, CacheReadInputTokens: 40000, OutputTokens: 500, TotalCostUSD: 0.015}, *code.HostUsage)
	assert.True(t, code.Passed, "the result text is what is graded: %v", code.Evidence)
	assert.Equal(t, *goodAnswer(t, "code"), code.Output)
	for _, task := range Tasks() {
		assert.True(t, hostTurn(rec, task.ID).Passed, task.ID)
		assert.Nil(t, rec.Cells[task.ID][ArmLocal].Usage)
	}
	assert.Equal(t, &CellUsage{Method: MethodMeasured, Measured: 1, NumTurns: 3, InputTokens: 10, CacheCreationInputTokens: 2000, CacheReadInputTokens: 40001, OutputTokens: 500, TotalCostUSD: 0.025},
		rec.Cells["codify"][ArmHost].Usage)

	data, err := os.ReadFile(RecordPath(o.Root, o.Name))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"host_usage": {`)
	assert.NotContains(t, string(data), "session_id", "only the usage and the answer are kept of the host's result object")
	register, err := os.ReadFile(RegisterPath(o.Root, o.Name))
	require.NoError(t, err)
	assert.Contains(t, string(register), "| code | 1/1 | 2.0 | 10 | 2000 | 40000 | 500 | 0.0150 |\n")
	assert.Empty(t, verifyFails(t, o))
}

// A host that prints plain text keeps everything as before: no usage, no note, a version 1
// record with none of the new fields, a register with no usage table.
func TestCapturePlainTextHostIsAsBefore(t *testing.T) {
	out := map[string]string{}
	for _, task := range Tasks() {
		out[task.ID] = *goodAnswer(t, task.ID)
	}
	o, rec := captureWithHost(t, out)
	assert.Equal(t, 1, rec.Version)
	for _, turn := range rec.Turns {
		assert.Nil(t, turn.HostUsage, turn.Key())
		assert.Empty(t, turn.UsageNote, turn.Key())
		if turn.Arm == ArmHost {
			assert.Equal(t, out[turn.Task], turn.Output)
			assert.True(t, turn.Passed, turn.Key())
		}
	}
	data, err := os.ReadFile(RecordPath(o.Root, o.Name))
	require.NoError(t, err)
	for _, key := range []string{"host_usage", "usage_note", `"usage"`} {
		assert.NotContains(t, string(data), key)
	}
	assert.Contains(t, string(data), "\"version\": 1\n")
	register, err := os.ReadFile(RegisterPath(o.Root, o.Name))
	require.NoError(t, err)
	assert.NotContains(t, string(register), "as the host command printed it")
	assert.Empty(t, verifyFails(t, o))
}

// What a host prints is untrusted: a result object with a key named twice, a figure out of
// bounds, broken or huge JSON gives no usage and a note, never a crash; the capture completes and
// the record verifies.
func TestCaptureHostPrintingBadJSONGetsANote(t *testing.T) {
	good := func(task string) string { return *goodAnswer(t, task) }
	a, _ := json.Marshal(good("codify"))
	out := map[string]string{
		"code":    `{"type":"result","result":"x","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1},"num_turns":0}`,
		"codify":  `{"type":"result","result":` + string(a) + `,"num_turns":-3,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1}}`,
		"handoff": `{"type":"result","result":"` + strings.Repeat("a", MaxHostResultBytes+1) + `"}`,
		"agent":   `{"type":"result", oops}`,
	}
	o, rec := captureWithHost(t, out)
	assert.Equal(t, 2, rec.Version, "a note is version 2")
	notes := map[string]string{}
	for _, task := range Tasks() {
		turn := hostTurn(rec, task.ID)
		assert.Nil(t, turn.HostUsage, task.ID)
		notes[task.ID] = turn.UsageNote
	}
	assert.Contains(t, notes["code"], `duplicate key "num_turns"`)
	assert.Contains(t, notes["codify"], "num_turns is -3")
	assert.True(t, hostTurn(rec, "codify").Passed, "a result object with a bad figure still gives its answer")
	assert.Contains(t, notes["handoff"], "more than the 4 MiB")
	assert.Contains(t, notes["agent"], "could not read for its usage")
	assert.Equal(t, out["agent"], hostTurn(rec, "agent").Output, "JSON that does not read is graded as printed")
	register, err := os.ReadFile(RegisterPath(o.Root, o.Name))
	require.NoError(t, err)
	assert.Contains(t, string(register), "| code | 0/1 | - | - | - | - | - | - |\n")
	assert.Contains(t, string(register), "4 host turns printed output that looked like a result object but gave no usage")
	assert.Empty(t, verifyFails(t, o))
}

// --verify holds the usage: a value changed after signing fails the signature and the cells'
// sums; a record signed again with usage out of bounds, on a local turn, in a version 1 record,
// or with a cell sum that does not re-fold fails by name.
func TestVerifyHoldsTheHostUsage(t *testing.T) {
	out := map[string]string{}
	for _, task := range Tasks() {
		out[task.ID] = claudeResult(*goodAnswer(t, task.ID), 2, 10, 2000, 40000, 500, "0.015")
	}
	o, rec := captureWithHost(t, out)
	path := RecordPath(o.Root, o.Name)
	signed, err := os.ReadFile(path)
	require.NoError(t, err)

	tampered := strings.Replace(string(signed), `"cache_read_input_tokens": 40000`, `"cache_read_input_tokens": 4000`, 1)
	require.NotEqual(t, string(signed), tampered)
	require.NoError(t, os.WriteFile(path, []byte(tampered), 0o644))
	fails := verifyFails(t, o)
	assert.Contains(t, fails, "the record cannot be trusted: "+ErrBadSignature.Error())
	assert.Contains(t, strings.Join(fails, "\n"), "the cells do not re-fold from the turns")

	resign := func(edit func(r *Record)) {
		t.Helper()
		r := *rec
		r.Turns = append([]Turn(nil), rec.Turns...)
		for i := range r.Turns {
			if u := r.Turns[i].HostUsage; u != nil {
				c := *u
				r.Turns[i].HostUsage = &c
			}
		}
		r.Cells = FoldCells(r.Turns)
		edit(&r)
		data, err := MarshalSigned(&r, o.Key)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		require.NoError(t, os.WriteFile(RegisterPath(o.Root, o.Name), RenderRegister(&r, o.Roles), 0o644))
	}
	cases := []struct {
		name string
		edit func(r *Record)
		want string
	}{
		{"a count past its bound, signed", func(r *Record) {
			r.Turns[len(r.Turns)-1].HostUsage.OutputTokens = MaxHostTokens + 1
			r.Cells = FoldCells(r.Turns)
		}, "the record's shape"},
		{"usage on a local turn", func(r *Record) {
			r.Turns[0].HostUsage = &HostUsage{Method: MethodMeasured}
			r.Cells = FoldCells(r.Turns)
		}, "turn L/code/1 carries host usage, but it is not a host turn"},
		{"usage in a version 1 record", func(r *Record) { r.Version = 1 }, "the record says version 1, which holds no host usage"},
		{"a cell sum that does not re-fold", func(r *Record) {
			c := r.Cells["code"][ArmHost]
			u := *c.Usage
			u.TotalCostUSD = 0.001
			c.Usage = &u
			r.Cells["code"][ArmHost] = c
		}, "the cells do not re-fold from the turns"},
		{"a method other than measured", func(r *Record) {
			r.Turns[len(r.Turns)-1].HostUsage.Method = "estimated"
			r.Cells = FoldCells(r.Turns)
		}, "the record's shape"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resign(tc.edit)
			assert.Contains(t, strings.Join(verifyFails(t, o), "\n"), tc.want)
		})
	}
	resign(func(*Record) {})
	assert.Empty(t, verifyFails(t, o))
}

// A resumed capture takes a journalled host turn's usage only when it is well-formed: a line
// carrying usage out of bounds is not one locum wrote.
func TestJournalRefusesMalformedHostUsage(t *testing.T) {
	cond := Conditions{Seed: 42, K: 5}
	turn := func(u HostUsage) []byte {
		data, err := json.Marshal(journalLine{Kind: "turn", Turn: &Turn{Arm: ArmHost, Task: "code", Run: 1, HostUsage: &u}})
		require.NoError(t, err)
		return append(data, '\n')
	}
	ok := append(journalBytesFuzz(cond), turn(HostUsage{Method: MethodMeasured, NumTurns: 1})...)
	done, _, _, _, _, err := parseJournal("j", ok, cond)
	require.NoError(t, err)
	assert.NotNil(t, done["H/code/1"].HostUsage)
	bad := append(journalBytesFuzz(cond), turn(HostUsage{Method: MethodMeasured, NumTurns: -1})...)
	_, _, _, _, _, err = parseJournal("j", bad, cond)
	var corrupt *JournalCorruptError
	assert.True(t, errors.As(err, &corrupt), "got %v", err)
}
