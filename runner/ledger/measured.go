package ledger

import (
	"fmt"
	"slices"
	"time"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/hostusage"
)

// HostUsage is the operator's consent to read the host's own usage: the folder of its
// transcripts. Only the operator names it (a flag, the environment, the user config): the
// transcripts are the operator's, outside every repository.
type HostUsage struct {
	Folder string
	// ToolListTokens is the size of locum's MCP tool list and instructions, in tokens, which a
	// session that uses locum's tools carries on each request; 0 leaves the standing cost out.
	ToolListTokens int64
	// Tolerance is how far the transcripts' times and the journals' may disagree (0:
	// hostusage.Tolerance); Limits bound the reading (zero: hostusage.DefaultLimits).
	Tolerance time.Duration
	Limits    hostusage.Limits
}

// ToolListTokens is what locum's MCP tool list and instructions (cost.StandingBytes) come to
// in tokens at p's bytes a token: what a session that uses locum's tools carries on each request.
func ToolListTokens(p cost.Params) int64 { return p.Tokens(cost.StandingBytes) }

// HostRun is one run joined to the host's call that made it, measured.
type HostRun struct {
	Run       string `json:"run"`
	Mode      string `json:"mode"`
	Session   string `json:"session"`
	Tool      string `json:"tool"`
	Sidechain bool   `json:"sidechain"`
	// Call and Read are the run's shares of the requests that made the call and read its
	// result; Turns counts them (1 where no request read the result yet).
	Call  hostusage.Usage `json:"call"`
	Read  hostusage.Usage `json:"read"`
	Turns int             `json:"turns"`
	// Tokens is every token of the two turns, USD their price with cache writes and reads apart.
	Tokens int64   `json:"tokens"`
	USD    float64 `json:"usd"`
	// Context is C, the host's context around the call: what one turn re-read there.
	Context int64  `json:"context_tokens"`
	Method  string `json:"method"`
}

// RowHost is a row's runs as the host's transcripts measured them.
type RowHost struct {
	Method string `json:"method"`
	// Joined counts the row's runs joined to a host call; Turns, Tokens and USD sum their
	// measured turns.
	Joined int     `json:"joined"`
	Turns  int     `json:"turns"`
	Tokens int64   `json:"tokens"`
	USD    float64 `json:"usd"`
	// Context is the median C of the joined runs; 0 where none was joined.
	Context  int64 `json:"context_tokens"`
	contexts []int64
}

// Standing is what keeping locum's tool list cost the sessions that joined runs show used it.
type Standing struct {
	Method         string  `json:"method"`
	ToolListTokens int64   `json:"tool_list_tokens"`
	Sessions       int     `json:"sessions"`
	Requests       int     `json:"requests"`
	Tokens         int64   `json:"tokens"`
	USD            float64 `json:"usd"`
}

// HostReport is what the host's transcripts measured of the ledger's runs.
type HostReport struct {
	Method string `json:"method"`
	// Files and Sessions are what was read; Calls the calls of locum they hold.
	Files    int `json:"files"`
	Sessions int `json:"sessions"`
	Calls    int `json:"calls"`
	// Joined counts the runs joined to a host call, Unjoined the runs (calls of their own, not
	// a workflow's items) no call in the transcripts made: run at a terminal, or by a session
	// not in the folder.
	Joined   int            `json:"joined"`
	Unjoined int            `json:"unjoined"`
	Left     hostusage.Left `json:"left"`
	Runs     []HostRun      `json:"runs"`
	Standing Standing       `json:"standing"`
	contexts map[string]int64
}

// Context is C as measured around the call that made run: what replaces the default for it.
func (h *HostReport) Context(run string) (int64, bool) {
	if h == nil {
		return 0, false
	}
	c, ok := h.contexts[run]
	return c, ok && c > 0
}

// BuildMeasured is Build, with the host's own usage joined to the runs where the operator named
// its transcripts: each run's measured turns beside its estimate, the host's context around the
// call, and the standing cost of locum's tool list.
func BuildMeasured(dir string, key []byte, f Filter, by string, p cost.Params, host HostUsage) (Report, error) {
	rep, entries, err := build(dir, key, f, by, p)
	if err != nil || host.Folder == "" {
		return rep, err
	}
	h, rows, total, err := measure(entries, host, by, p)
	if err != nil {
		return Report{}, err
	}
	// C as measured around each joined run's call replaces the default, not what the call said.
	for i, e := range entries {
		if c, ok := h.Context(e.Run); ok && e.ContextSource != "call" {
			entries[i].Context, entries[i].ContextSource = c, "transcript"
		}
	}
	l, err := Sum(entries, by, p)
	if err != nil {
		return Report{}, err
	}
	l.Since = rep.Since
	for i := range l.Rows {
		l.Rows[i].Host = rows[l.Rows[i].Key]
		if l.Rows[i].Host == nil {
			l.Rows[i].Host = &RowHost{Method: cost.MethodMeasured}
		}
		l.Rows[i].Host.finish()
	}
	total.finish()
	l.Total.Host = total
	rep.Ledger = l
	rep.Host = h
	return rep, nil
}

func measure(entries []Entry, host HostUsage, by string, p cost.Params) (*HostReport, map[string]*RowHost, *RowHost, error) {
	tol := host.Tolerance
	if tol <= 0 {
		tol = hostusage.Tolerance
	}
	h := &HostReport{Method: cost.MethodMeasured + ": the host's own usage in its transcripts; a run is joined to the tool call whose result names its id and within whose time it ran, " +
		"its turns are the request that made the call and the one that read the result (a request serving several runs shared between them), " +
		fmt.Sprintf("priced at %s prices (%s): $%g in, $%g cache write, $%g cached, $%g out, per million; ", p.Prices.Family, p.Prices.Source, p.Prices.In, p.Prices.CacheWrite, p.Prices.Cached, p.Prices.Out) +
		fmt.Sprintf("C is the median context of the %d requests of its chain around the call", 2*hostusage.Window+1),
		Runs: []HostRun{}, contexts: map[string]int64{}}
	byRun := map[string]Entry{}
	var runs []hostusage.Run
	var since time.Time
	for _, e := range entries {
		// A workflow's items share their workflow's one call: the workflow's run is joined.
		if e.Parent != "" {
			continue
		}
		byRun[e.Run] = e
		runs = append(runs, hostusage.Run{ID: e.Run, Start: e.Start, End: e.Start.Add(time.Duration(e.LocalMs) * time.Millisecond)})
		if since.IsZero() || e.Start.Before(since) {
			since = e.Start
		}
	}
	h.Standing = Standing{Method: cost.MethodMeasured + ": the sessions that made the joined runs and called a tool of locum's MCP server, each request of their main chain carrying the tool list, at the cached price",
		ToolListTokens: max(host.ToolListTokens, 0)}
	rows := map[string]*RowHost{}
	total := &RowHost{Method: cost.MethodMeasured}
	if len(runs) == 0 {
		return h, rows, total, nil
	}
	t, err := hostusage.Read(host.Folder, hostusage.Options{Limits: host.Limits, Since: since.Add(-tol)})
	if err != nil {
		return nil, nil, nil, err
	}
	h.Files, h.Sessions, h.Calls, h.Left = t.Files, len(t.Sessions), len(t.Calls), t.Left
	sessions := map[string]bool{}
	for _, j := range t.Join(runs, tol) {
		e := byRun[j.Run]
		turns := j.Turns()
		hr := HostRun{Run: j.Run, Mode: e.Mode, Session: j.Session, Tool: j.Tool, Sidechain: j.Sidechain, Call: j.Call, Read: j.Read,
			Turns: 1, Tokens: turns.Tokens(), USD: cost.Dollars(turns.USD(p.Prices)), Context: j.Context, Method: cost.MethodMeasured}
		if j.Reads {
			hr.Turns = 2
		}
		h.Runs = append(h.Runs, hr)
		h.contexts[j.Run] = j.Context
		sessions[j.Session] = true
		k := keyOf(e, by)
		if rows[k] == nil {
			rows[k] = &RowHost{Method: cost.MethodMeasured}
		}
		rows[k].add(hr)
		total.add(hr)
	}
	h.Joined = len(h.Runs)
	h.Unjoined = len(runs) - h.Joined
	for _, s := range t.Sessions {
		if !sessions[s.ID] {
			continue
		}
		c := hostusage.Standing(s, h.Standing.ToolListTokens)
		if c.Requests == 0 {
			continue
		}
		h.Standing.Sessions++
		h.Standing.Requests += c.Requests
		h.Standing.Tokens = cost.AddTokens(h.Standing.Tokens, c.Tokens)
	}
	h.Standing.USD = cost.Dollars(float64(h.Standing.Tokens) * p.Prices.Cached / 1e6)
	return h, rows, total, nil
}

func (r *RowHost) add(h HostRun) {
	r.Joined++
	r.Turns += h.Turns
	r.Tokens = cost.AddTokens(r.Tokens, h.Tokens)
	r.USD += h.USD
	r.contexts = append(r.contexts, h.Context)
}

func (r *RowHost) finish() {
	r.USD = cost.Dollars(r.USD)
	if n := len(r.contexts); n > 0 {
		slices.Sort(r.contexts)
		if n%2 == 1 {
			r.Context = r.contexts[n/2]
		} else {
			r.Context = (r.contexts[n/2-1] + r.contexts[n/2]) / 2
		}
	}
}
