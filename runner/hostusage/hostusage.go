// Package hostusage reads what a host's own usage log says its requests cost: Claude Code's
// session transcripts, JSON lines under a folder the operator names (Claude Code keeps them in
// ~/.claude/projects/PROJECT/SESSION.jsonl, a subagent's in SESSION/subagents/agent-ID.jsonl).
// Each assistant line carries its API request's usage: input, cache creation, cache read and
// output tokens. One response is written as several lines, one a content block, each repeating
// the message id, the request id and the usage; a request is counted once, as ccusage counts it
// (by message id and request id), with the largest of each figure its lines give, since the
// output grows as a response streams.
//
// It keeps only what the ledger needs: each request's usage and time, and the calls of locum
// (a Bash command that runs locum, or a tool of locum's MCP server) with the run ids their
// results name; and it joins a locum run to the request that made the call and the one that read
// its result (Join). Everything in a transcript is untrusted input: files are read only if they
// are regular and inside the folder after symbolic links, each under a ceiling, a line under
// another; a line that is not one JSON object, names a key twice or is over its ceiling is
// skipped and counted, never fatal.
package hostusage

import (
	"time"

	"github.com/locumdev/locum/runner/cost"
)

// Usage is what one host request's usage says it read and wrote, in tokens.
type Usage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
}

// Context is the prompt the request read: new input, input written to the cache and input read
// from it. It is the host's context on that turn, what the next turn reads again.
func (u Usage) Context() int64 { return u.Input + u.CacheCreation + u.CacheRead }

// Tokens is every token of the request, read or written.
func (u Usage) Tokens() int64 { return u.Context() + u.Output }

// Add is the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{Input: cost.AddTokens(u.Input, o.Input), CacheCreation: cost.AddTokens(u.CacheCreation, o.CacheCreation),
		CacheRead: cost.AddTokens(u.CacheRead, o.CacheRead), Output: cost.AddTokens(u.Output, o.Output)}
}

// USD prices the usage at p: new input at the input price, cache creation at the cache-write
// price, cache reads at the cached price, output at the output price.
func (u Usage) USD(p cost.Prices) float64 {
	return (float64(u.Input)*p.In + float64(u.CacheCreation)*p.CacheWrite + float64(u.CacheRead)*p.Cached + float64(u.Output)*p.Out) / 1e6
}

// share is the i-th of n even shares of u (0 <= i < n), each figure's remainder to the first
// shares: the n shares sum to u exactly.
func (u Usage) share(i, n int) Usage {
	if n <= 1 {
		return u
	}
	part := func(v int64) int64 {
		q, r := v/int64(n), v%int64(n)
		if int64(i) < r {
			q++
		}
		return q
	}
	return Usage{Input: part(u.Input), CacheCreation: part(u.CacheCreation), CacheRead: part(u.CacheRead), Output: part(u.Output)}
}

// atLeast is u with each figure raised to o's where o's is larger: two lines of one response
// give the same input figures and a growing output.
func (u Usage) atLeast(o Usage) Usage {
	return Usage{Input: max(u.Input, o.Input), CacheCreation: max(u.CacheCreation, o.CacheCreation),
		CacheRead: max(u.CacheRead, o.CacheRead), Output: max(u.Output, o.Output)}
}

// Session is one host session as its transcripts show it.
type Session struct {
	ID string `json:"id"`
	// Requests counts the main chain's requests; Sidechain a subagent's.
	Requests  int `json:"requests"`
	Sidechain int `json:"sidechain_requests"`
	// Locum says the session called a tool of locum's MCP server: the server's tool list was in
	// its context on every request.
	Locum bool      `json:"locum_tools"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// Call is one call of locum a transcript shows: the tool use, its result, and the requests around
// it.
type Call struct {
	Session   string `json:"session"`
	ToolUseID string `json:"tool_use_id"`
	// Tool is the tool's name: Bash, or mcp__SERVER__TOOL.
	Tool      string `json:"tool"`
	Sidechain bool   `json:"sidechain"`
	// At is the time of the line that holds the tool use; ResultAt that of the line that holds
	// its result, zero where none was read.
	At       time.Time `json:"at"`
	ResultAt time.Time `json:"result_at"`
	// RunIDs are the run ids the result names (` run=ID`, or "run_id": "ID").
	RunIDs []string `json:"run_ids"`
	// Call is the usage of the request that made the call; Read that of the first request that
	// read its result (Reads says there was one).
	Call  Usage `json:"call"`
	Read  Usage `json:"read"`
	Reads bool  `json:"reads"`
	// Context is C around the call: the median context of the chain's requests within Window
	// of the one that made it.
	Context int64 `json:"context_tokens"`

	callRef, readRef ref
}

// Window is how many of a chain's requests on each side of a call its context is the median of.
// The median of up to 21 requests around the call is the context the host re-read at that point
// of its session, where one compaction (a turn far smaller) or one large read (a turn far larger)
// does not move it, and a session's growth over hours does not reach it.
const Window = 10

// Left is what a reading left out, and why.
type Left struct {
	// Files counts the files not read: not a regular file, leading out of the folder, over the
	// ceiling for one file or for all, past the number read, or unreadable.
	Files int `json:"files"`
	// Lines counts the lines skipped: not one JSON object, a key named twice, nested too deep,
	// or not of the shape of a transcript line.
	Lines int `json:"lines"`
	// LongLines counts the lines over the ceiling for one line, skipped unread.
	LongLines int `json:"long_lines"`
	// Requests counts the requests past the number kept.
	Requests int `json:"requests"`
}

// Total is every item left out.
func (l Left) Total() int { return l.Files + l.Lines + l.LongLines + l.Requests }

// Transcripts is what a folder of transcripts holds, as far as the ledger needs it.
type Transcripts struct {
	// Files counts the files read; Older those passed over as last written before Options.Since.
	Files    int       `json:"files"`
	Older    int       `json:"older"`
	Sessions []Session `json:"sessions"`
	// Calls are locum's calls, in the order they were made.
	Calls []Call `json:"calls"`
	Left  Left   `json:"left"`
}

// SessionByID returns the session named id.
func (t *Transcripts) SessionByID(id string) (Session, bool) {
	for _, s := range t.Sessions {
		if s.ID == id {
			return s, true
		}
	}
	return Session{}, false
}

// StandingCost is what the tool list of locum's MCP server cost a session: its tokens, on each
// of the session's requests.
type StandingCost struct {
	Requests int   `json:"requests"`
	Tokens   int64 `json:"tokens"`
}

// Standing is what keeping locum's tool list, toolListTokens long, cost session s: the list on
// each of its main chain's requests. A session that called none of locum's MCP tools shows no
// sign the list was there and is charged nothing; a subagent's tools depend on its kind, so its
// requests are not counted.
func Standing(s Session, toolListTokens int64) StandingCost {
	if !s.Locum || toolListTokens <= 0 {
		return StandingCost{}
	}
	return StandingCost{Requests: s.Requests, Tokens: satMul(toolListTokens, int64(s.Requests))}
}

func satMul(a, b int64) int64 {
	if a > 0 && b > 0 && a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}
