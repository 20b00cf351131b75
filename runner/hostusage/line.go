package hostusage

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/untrusted"
)

// rawLine is the part of a transcript line the reader decodes; every other field is passed over.
type rawLine struct {
	Type        string          `json:"type"`
	SessionID   string          `json:"sessionId"`
	Timestamp   string          `json:"timestamp"`
	UUID        string          `json:"uuid"`
	ParentUUID  string          `json:"parentUuid"`
	IsSidechain bool            `json:"isSidechain"`
	AgentID     string          `json:"agentId"`
	RequestID   string          `json:"requestId"`
	Message     json.RawMessage `json:"message"`
}

// rawMessage is a line's message: a user's or an assistant's, as the Messages API has it.
type rawMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Usage   *rawUsage       `json:"usage"`
	Content json.RawMessage `json:"content"`
}

type rawUsage struct {
	Input         json.RawMessage `json:"input_tokens"`
	CacheCreation json.RawMessage `json:"cache_creation_input_tokens"`
	CacheRead     json.RawMessage `json:"cache_read_input_tokens"`
	Output        json.RawMessage `json:"output_tokens"`
}

// rawBlock is one content block: text, tool_use or tool_result (a thinking or image block is
// passed over).
type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// maxTokens bounds one figure of a request's usage: far past any model's context, small enough
// that no sum of them overflows.
const maxTokens = 1 << 32

// synthetic is the model Claude Code names on a message it made itself (an API error shown as
// a reply): no request was sent.
const synthetic = "<synthetic>"

// ref names a request: its chain and its place there. A zero ref names none.
type ref struct{ chain, index int32 }

func (r ref) ok() bool { return r.chain > 0 }

// chain is one thread of requests in one file: a session's main chain, or a subagent's.
type chain struct {
	file      int
	session   string
	sidechain bool
	agent     string
	requests  []request
}

type chainKey struct {
	file      int
	session   string
	sidechain bool
	agent     string
}

type request struct {
	usage Usage
}

// pending is a call whose result was read and whose reader is still to come: the first request
// that descends from the result's line (through the lines between, parentUuid by parentUuid),
// or, where the result's line has no uuid, the chain's next request.
type pending struct {
	call  *Call
	below map[string]bool
	chain chainKey
}

// maxBelow bounds the lines followed from a result to the request that reads it.
const maxBelow = 4096

// reader is one reading of a folder.
type reader struct {
	lim      Limits
	files    int
	older    int
	left     Left
	seed     maphash.Seed
	keys     map[uint64]ref
	chains   []*chain
	chainIDs map[chainKey]int32
	requests int
	sessions map[string]*Session
	calls    map[string]*Call
	order    []*Call
	file     int
	pending  []pending
}

func newReader(lim Limits) *reader {
	// chains[0] is no chain, so that a zero ref names no request.
	return &reader{lim: lim, seed: maphash.MakeSeed(), keys: map[uint64]ref{}, chains: []*chain{nil},
		chainIDs: map[chainKey]int32{}, sessions: map[string]*Session{}, calls: map[string]*Call{}}
}

// beginFile starts a file: a result's reader is looked for in its own file only.
func (r *reader) beginFile(index int) {
	r.file = index
	r.pending = r.pending[:0]
}

var (
	usageKey  = []byte(`"usage"`)
	resultKey = []byte(`"tool_result"`)
)

// line reads one line. Only the lines that can matter are decoded: those that carry a usage or
// a tool result, and, while a result waits for its reader, every line.
func (r *reader) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if len(r.pending) == 0 && !bytes.Contains(b, usageKey) && !bytes.Contains(b, resultKey) {
		return
	}
	var l rawLine
	if untrusted.Unmarshal(b, &l) != nil {
		r.left.Lines++
		return
	}
	var at time.Time
	if l.Type == "assistant" || l.Type == "user" {
		var err error
		if at, err = time.Parse(time.RFC3339Nano, l.Timestamp); err != nil {
			r.left.Lines++
			return
		}
	}
	var req ref
	var ok bool
	switch l.Type {
	case "assistant":
		if req, ok = r.assistant(l, at); !ok {
			r.left.Lines++
			return
		}
	case "user":
		if !r.user(l, at) {
			r.left.Lines++
			return
		}
	}
	r.follow(l, req)
}

// follow moves each waiting result one line on: a request that descends from it is its reader.
func (r *reader) follow(l rawLine, req ref) {
	kept := r.pending[:0]
	for _, p := range r.pending {
		switch {
		case p.below == nil:
			if req.ok() && r.keyOf(l) == p.chain {
				r.read(p.call, req)
				continue
			}
		case l.ParentUUID != "" && p.below[l.ParentUUID]:
			if req.ok() {
				r.read(p.call, req)
				continue
			}
			if l.UUID != "" && len(p.below) < maxBelow {
				p.below[l.UUID] = true
			}
		}
		kept = append(kept, p)
	}
	r.pending = kept
}

func (r *reader) read(c *Call, req ref) {
	c.readRef, c.Reads = req, true
}

func (r *reader) keyOf(l rawLine) chainKey {
	return chainKey{file: r.file, session: l.SessionID, sidechain: l.IsSidechain, agent: l.AgentID}
}

func (r *reader) session(id string, at time.Time) *Session {
	s, ok := r.sessions[id]
	if !ok {
		s = &Session{ID: id, First: at, Last: at}
		r.sessions[id] = s
	}
	if at.Before(s.First) {
		s.First = at
	}
	if at.After(s.Last) {
		s.Last = at
	}
	return s
}

// message decodes a line's message; false where it is not an object of the API's shape.
func message(raw json.RawMessage) (rawMessage, bool) {
	var m rawMessage
	if len(raw) == 0 || raw[0] != '{' {
		return m, false
	}
	return m, json.Unmarshal(raw, &m) == nil
}

// blocks decodes a message's content: a list of blocks, or text (none).
func blocks(raw json.RawMessage) ([]rawBlock, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, len(raw) == 0 || raw[0] == '"' || string(raw) == "null"
	}
	var out []rawBlock
	return out, json.Unmarshal(raw, &out) == nil
}

// assistant reads an assistant line: its request's usage, counted once however many lines the
// response took, and its calls of locum. false where the line is not of the API's shape.
func (r *reader) assistant(l rawLine, at time.Time) (ref, bool) {
	m, ok := message(l.Message)
	if !ok {
		return ref{}, false
	}
	content, ok := blocks(m.Content)
	if !ok {
		return ref{}, false
	}
	if m.Usage == nil || m.Model == synthetic {
		// A message no request answered: nothing to count.
		return ref{}, true
	}
	u, ok := m.Usage.usage()
	if !ok {
		return ref{}, false
	}
	var key string
	switch {
	case m.ID != "":
		key = "m\x00" + m.ID + "\x00" + l.RequestID
	case l.UUID != "":
		key = "u\x00" + l.UUID
	default:
		return ref{}, false
	}
	h := maphash.String(r.seed, key)
	req, seen := r.keys[h]
	switch {
	case seen:
		c := r.chains[req.chain]
		c.requests[req.index].usage = c.requests[req.index].usage.atLeast(u)
	case r.requests >= r.lim.Requests:
		r.left.Requests++
		return ref{}, true
	default:
		req = r.add(l, u)
		r.keys[h] = req
		s := r.session(l.SessionID, at)
		if l.IsSidechain {
			s.Sidechain++
		} else {
			s.Requests++
		}
	}
	for _, b := range content {
		if b.Type != "tool_use" || b.ID == "" || !locumTool(b.Name, b.Input) {
			continue
		}
		if _, dup := r.calls[b.ID]; dup || len(r.calls) >= r.lim.Requests {
			continue
		}
		c := &Call{Session: l.SessionID, ToolUseID: b.ID, Tool: b.Name, Sidechain: l.IsSidechain, At: at, callRef: req}
		r.calls[b.ID] = c
		r.order = append(r.order, c)
		if _, _, mcp := mcpTool(b.Name); mcp {
			r.session(l.SessionID, at).Locum = true
		}
	}
	return req, true
}

// add puts a new request at the end of its chain.
func (r *reader) add(l rawLine, u Usage) ref {
	k := r.keyOf(l)
	id, ok := r.chainIDs[k]
	if !ok {
		id = int32(len(r.chains))
		r.chains = append(r.chains, &chain{file: k.file, session: k.session, sidechain: k.sidechain, agent: k.agent})
		r.chainIDs[k] = id
	}
	c := r.chains[id]
	c.requests = append(c.requests, request{usage: u})
	r.requests++
	return ref{chain: id, index: int32(len(c.requests) - 1)}
}

// user reads a user line: the results of locum's calls it carries, and the run ids they name.
func (r *reader) user(l rawLine, at time.Time) bool {
	if !bytes.Contains(l.Message, resultKey) {
		return true
	}
	m, ok := message(l.Message)
	if !ok {
		return false
	}
	content, ok := blocks(m.Content)
	if !ok {
		return false
	}
	for _, b := range content {
		if b.Type != "tool_result" {
			continue
		}
		c, ok := r.calls[b.ToolUseID]
		if !ok || !c.ResultAt.IsZero() {
			continue
		}
		c.ResultAt = at
		c.RunIDs = runIDs(resultText(b.Content))
		p := pending{call: c}
		if l.UUID != "" {
			p.below = map[string]bool{l.UUID: true}
		} else {
			p.chain = r.keyOf(l)
		}
		r.pending = append(r.pending, p)
	}
	r.session(l.SessionID, at)
	return true
}

// usage reads a usage's figures: whole numbers written as such, from 0 to maxTokens; a missing
// one (or null) is 0.
func (u rawUsage) usage() (Usage, bool) {
	var out Usage
	for _, f := range []struct {
		n  json.RawMessage
		to *int64
	}{{u.Input, &out.Input}, {u.CacheCreation, &out.CacheCreation}, {u.CacheRead, &out.CacheRead}, {u.Output, &out.Output}} {
		if len(f.n) == 0 || string(f.n) == "null" {
			continue
		}
		v, err := strconv.ParseInt(string(f.n), 10, 64)
		if err != nil || v < 0 || v > maxTokens {
			return Usage{}, false
		}
		*f.to = v
	}
	return out, true
}

// resultText is a tool result's text: a string, or its text blocks joined.
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// runIDPattern finds the run ids a result names: the receipt's ` run=ID` and the result object's
// "run_id": "ID". A bare id (a journal's file name in a listing) is not a result's.
var runIDPattern = regexp.MustCompile(`(?:\brun=|"run_id"\s*:\s*")([0-9]{8}T[0-9]{6}Z-[0-9a-f]{6})\b`)

// maxRunIDs bounds the run ids kept of one result (a workflow's names one per item).
const maxRunIDs = 1000

func runIDs(text string) []string {
	var out []string
	for _, m := range runIDPattern.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) && len(out) < maxRunIDs {
			out = append(out, m[1])
		}
	}
	return out
}

// mcpTool splits an MCP tool's name as Claude Code writes it, mcp__SERVER__TOOL.
func mcpTool(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	if !ok || !strings.Contains(strings.ToLower(server), "locum") {
		return "", "", false
	}
	return server, tool, true
}

// runsLocum finds locum as a command word of a shell command: locum, a path ending in /locum
// (go run ./cmd/locum too), after a separator, a quote or a space.
var runsLocum = regexp.MustCompile(`(?:^|[\s;&|(/'"])locum(?:\s|$)`)

// locumTool says a tool use calls locum: a tool of locum's MCP server, or a Bash command that
// runs it.
func locumTool(name string, input json.RawMessage) bool {
	if _, _, ok := mcpTool(name); ok {
		return true
	}
	if name != "Bash" {
		return false
	}
	var in struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(input, &in) == nil && runsLocum.MatchString(in.Command)
}

// finish computes each call's figures from its requests and returns what the reading holds.
func (r *reader) finish() *Transcripts {
	t := &Transcripts{Files: r.files, Older: r.older, Left: r.left, Sessions: []Session{}, Calls: []Call{}}
	for _, s := range r.sessions {
		t.Sessions = append(t.Sessions, *s)
	}
	sort.Slice(t.Sessions, func(i, j int) bool { return t.Sessions[i].ID < t.Sessions[j].ID })
	for _, c := range r.order {
		if !c.callRef.ok() {
			continue
		}
		c.Call = r.usageOf(c.callRef)
		if c.Reads {
			c.Read = r.usageOf(c.readRef)
		}
		c.Context = r.context(c.callRef)
		t.Calls = append(t.Calls, *c)
	}
	sort.SliceStable(t.Calls, func(i, j int) bool { return t.Calls[i].At.Before(t.Calls[j].At) })
	return t
}

func (r *reader) usageOf(x ref) Usage { return r.chains[x.chain].requests[x.index].usage }

// context is the median context of the requests of x's chain within Window of x.
func (r *reader) context(x ref) int64 {
	reqs := r.chains[x.chain].requests
	lo, hi := max(int(x.index)-Window, 0), min(int(x.index)+Window+1, len(reqs))
	sizes := make([]int64, 0, hi-lo)
	for _, q := range reqs[lo:hi] {
		sizes = append(sizes, q.usage.Context())
	}
	slices.Sort(sizes)
	n := len(sizes)
	if n%2 == 1 {
		return sizes[n/2]
	}
	return (sizes[n/2-1] + sizes[n/2]) / 2
}
