package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sortedByEncodingJSON is details as encoding/json writes them, their keys then sorted as it
// sorts a map's: what the details writer must write. Nil where encoding/json writes no key.
func sortedByEncodingJSON(t *testing.T, d any) map[string]json.RawMessage {
	t.Helper()
	if d == nil {
		return nil
	}
	data, err := json.Marshal(d)
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &keys))
	if len(keys) == 0 {
		return nil
	}
	return keys
}

// piece is a part of details that several types embed.
type piece struct {
	File  string `json:"file,omitempty"`
	Lines string `json:"lines,omitempty"`
}

// Group is keys written together.
type Group struct {
	Added   int    `json:"added"`
	Changes string `json:"changes"`
}

// selfMarshaled marshals itself on its pointer, as a field of a struct marshaled by pointer does.
type selfMarshaled struct{ n int }

func (s *selfMarshaled) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]int{"n": s.n}) }

// zeroWhenEmpty says what zero is for omitzero.
type zeroWhenEmpty struct{ Text string }

func (z zeroWhenEmpty) IsZero() bool { return strings.TrimSpace(z.Text) == "" }

// every holds each kind of field a mode's details declare.
type every struct {
	Outcome    string            `json:"outcome,omitempty"`
	Count      *int              `json:"count,omitempty"`
	Exit       **int             `json:"exit,omitempty"`
	Always     *string           `json:"always"`
	Plain      int               `json:"plain"`
	List       []string          `json:"list,omitzero"`
	Words      []string          `json:"words,omitempty"`
	Params     map[string]string `json:"params,omitzero"`
	Nested     listed            `json:"nested"`
	Raw        []byte            `json:"raw,omitempty"`
	Self       selfMarshaled     `json:"self"`
	Selves     []selfMarshaled   `json:"selves,omitempty"`
	Blank      zeroWhenEmpty     `json:"blank,omitzero"`
	Anything   any               `json:"anything,omitempty"`
	Untagged   bool
	Skipped    string `json:"-"`
	unexported string
	piece
	*Group
}

// The details writer writes what encoding/json writes of each kind of field a mode declares,
// its keys sorted: a tag's options, an embedded struct, an embedded pointer nil and not, a
// pointer to a pointer nil, to nil and to a value, a list nil and empty, a method of its own.
func TestDetailsAreWrittenAsEncodingJSONWritesThem(t *testing.T) {
	zero, seven := 0, 7
	var none *int
	for name, d := range map[string]*every{
		"zero": {},
		"set": {Outcome: "kept <b>", Count: &zero, Exit: &none, Always: new("x"), Plain: 3, List: []string{}, Words: []string{"a"},
			Params: map[string]string{"z": "1", "a": "2"}, Nested: listed{Score: 1, A: "b"}, Raw: []byte("raw"), Self: selfMarshaled{n: 2},
			Selves: []selfMarshaled{{1}, {2}}, Blank: zeroWhenEmpty{" x "}, Anything: []int{1, 2}, Untagged: true, Skipped: "no",
			unexported: "no", piece: piece{File: "a.go", Lines: "1-3"}, Group: &Group{}},
		"exit":  {Exit: new(&seven), List: []string{"a", "b"}, Blank: zeroWhenEmpty{" "}, Group: &Group{Added: 2, Changes: "a.go:1"}},
		"empty": {Words: []string{}, Params: map[string]string{}, Anything: []any{}},
	} {
		t.Run(name, func(t *testing.T) {
			want := sortedByEncodingJSON(t, d)
			got, err := encodeDetails(d)
			require.NoError(t, err)
			assert.Equal(t, want != nil, hasDetails(d))
			if want == nil {
				assert.Nil(t, got)
				return
			}
			wantJSON, err := json.Marshal(want)
			require.NoError(t, err)
			assert.Equal(t, string(wantJSON), string(got))
		})
	}
}

// twice names a key twice: encoding/json would write neither.
type twice struct {
	piece
	File string `json:"file"`
}

func TestDetailsNamingAKeyTwiceArePanic(t *testing.T) {
	assert.PanicsWithValue(t, `engine: the details engine.twice name the key "file" twice`, func() { hasDetails(&twice{}) })
	assert.Panics(t, func() { (&Run{}).SetDetails(twice{}) }, "details are a pointer")
}

// A journal's details are read into the mode's type: a key an older journal does not have is
// zero, and a value of another type is left zero while the rest is read.
func TestDecodeDetails(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  string
		want every
	}{
		"none":      {raw: ``, want: every{}},
		"null":      {raw: `null`, want: every{}},
		"older":     {raw: `{"outcome":"kept"}`, want: every{Outcome: "kept"}},
		"wrongType": {raw: `{"plain":"three","outcome":"kept","lines":"1-3","added":2}`, want: every{Outcome: "kept", piece: piece{Lines: "1-3"}, Group: &Group{Added: 2}}},
		"notJSON":   {raw: `{"outcome":`, want: every{}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, DecodeDetails[every](json.RawMessage(tc.raw)))
		})
	}
}

// shortened keeps fewer pairs in the journal than in the result.
type shortened struct {
	Pairs []listed `json:"pairs"`
	Total *int     `json:"pairs_total,omitempty"`
}

func (s *shortened) JournalDetails() any {
	n := len(s.Pairs)
	return &shortened{Pairs: s.Pairs[:1], Total: &n}
}

// The result holds the details a mode set; run_end holds what they keep for the journal, and
// details whose every key is left out are null in both.
func TestRunDetails(t *testing.T) {
	for name, tc := range map[string]struct {
		details     any
		result, end string
	}{
		"none":      {result: `null`, end: `null`},
		"zero":      {details: &Group{}, result: `{"added":0,"changes":""}`, end: `{"added":0,"changes":""}`},
		"omitted":   {details: &piece{}, result: `null`, end: `null`},
		"shortened": {details: &shortened{Pairs: []listed{{1, "a"}, {0.5, "b"}}}, result: `{"pairs":[{"score":1,"a":"a"},{"score":0.5,"a":"b"}]}`, end: `{"pairs":[{"score":1,"a":"a"}],"pairs_total":2}`},
	} {
		t.Run(name, func(t *testing.T) {
			journal := filepath.Join(t.TempDir(), "run.jsonl")
			res := Execute(context.Background(), RunSpec{Mode: "test", JournalPath: journal}, []Step{{Name: "set", Run: func(_ context.Context, r *Run) error {
				if tc.details != nil {
					r.SetDetails(tc.details)
				}
				return nil
			}}})
			data, err := json.Marshal(res)
			require.NoError(t, err)
			var got struct{ Details json.RawMessage }
			require.NoError(t, json.Unmarshal(data, &got))
			assert.Equal(t, tc.result, string(got.Details))
			lines, err := os.ReadFile(journal)
			require.NoError(t, err)
			var end struct{ Event, Details json.RawMessage }
			for line := range bytes.Lines(lines) {
				if require.NoError(t, json.Unmarshal(line, &end)); string(end.Event) == `"run_end"` {
					break
				}
			}
			assert.Equal(t, tc.end, string(end.Details))
		})
	}
}

// spec/result.md's table of the agent's details names every key AgentDetails writes, and no other.
func TestAgentDetailsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../spec/result.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "## The agent's details")
	require.True(t, ok)
	table, _, _ = strings.Cut(table, "\n\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(table, -1) {
		documented = append(documented, m[1])
	}
	var declared []string
	for _, f := range detailFields(reflect.TypeFor[AgentDetails]()) {
		declared = append(declared, f.name)
	}
	assert.ElementsMatch(t, declared, documented)
}
