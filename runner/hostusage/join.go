package hostusage

import (
	"sort"
	"time"
)

// Run is a locum run as its journal gives it: when it started and ended.
type Run struct {
	ID         string
	Start, End time.Time
}

// Tolerance is how far a transcript's times and a journal's may disagree and still be one call:
// both clocks are the machine's, and each side writes its time within moments of the event
// (the host its tool use before it runs the tool, its result after the tool has ended; locum
// its start and its end inside that).
const Tolerance = 5 * time.Second

// Joined is a run joined to the host's call that made it: the request that made the call and the
// request that read its result, with their usage, and C around the call. A request that served
// several runs (two calls in one response, or a response that read one result and made the next
// call) is shared between them evenly, so that no request is counted twice.
type Joined struct {
	Run       string `json:"run"`
	Session   string `json:"session"`
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id"`
	Sidechain bool   `json:"sidechain"`
	// Call and Read are this run's shares of the two requests' usage; Reads says a request read
	// the result (the session may have ended on it).
	Call  Usage `json:"call"`
	Read  Usage `json:"read"`
	Reads bool  `json:"reads"`
	// Context is C around the call, in tokens.
	Context int64 `json:"context_tokens"`
}

// Turns is the usage of the run's measured turns: its call and the reading of its result.
func (j Joined) Turns() Usage { return j.Call.Add(j.Read) }

// Join joins runs to the calls that made them. A call is a run's when its result names the run's
// id and the run lies within the call in time: it started after the tool use was written and
// ended before its result was, each within tol. A result that quotes an id of a run made before
// its call began (runs show, a ledger, a later message) is not that run's call. Where several
// calls qualify, the one made last before the run started is the run's. Runs no call made are
// left out.
func (t *Transcripts) Join(runs []Run, tol time.Duration) []Joined {
	byID := make(map[string]Run, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	chosen := map[string]int{}
	for i, c := range t.Calls {
		if c.ResultAt.IsZero() {
			continue
		}
		for _, id := range c.RunIDs {
			r, ok := byID[id]
			if !ok || r.Start.Before(c.At.Add(-tol)) || r.End.After(c.ResultAt.Add(tol)) {
				continue
			}
			if j, ok := chosen[id]; ok && !later(c, t.Calls[j]) {
				continue
			}
			chosen[id] = i
		}
	}
	ids := make([]string, 0, len(chosen))
	for id := range chosen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := byID[ids[i]], byID[ids[j]]
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		return ids[i] < ids[j]
	})
	// Each request is shared by the runs that claim it, as a call or as the reading of a result.
	claims := map[ref]int{}
	for _, id := range ids {
		c := t.Calls[chosen[id]]
		claims[c.callRef]++
		if c.Reads {
			claims[c.readRef]++
		}
	}
	taken := map[ref]int{}
	share := func(x ref, u Usage) Usage {
		i := taken[x]
		taken[x]++
		return u.share(i, claims[x])
	}
	out := make([]Joined, 0, len(ids))
	for _, id := range ids {
		c := t.Calls[chosen[id]]
		j := Joined{Run: id, Session: c.Session, Tool: c.Tool, ToolUseID: c.ToolUseID, Sidechain: c.Sidechain,
			Call: share(c.callRef, c.Call), Reads: c.Reads, Context: c.Context}
		if c.Reads {
			j.Read = share(c.readRef, c.Read)
		}
		out = append(out, j)
	}
	return out
}

// later says call a was made after b, the one that started a run being the last before it.
func later(a, b Call) bool {
	if !a.At.Equal(b.At) {
		return a.At.After(b.At)
	}
	return a.ToolUseID < b.ToolUseID
}
