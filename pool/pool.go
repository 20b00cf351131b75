// Package pool is the operator's pool of model servers that a run of many items (a workflow, a
// bench) spreads its items over: each endpoint probed under the loopback rail for what it is,
// the requests it decodes at once and the models it serves, and each item handed the least busy
// server with room, none over its capacity nor the run over its jobs.
package pool

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
)

// Server is one endpoint of the pool and what it takes at once.
type Server struct {
	URL string `json:"url"`
	// Kind is the server locum found there; Slots the requests it says it decodes at once (0
	// where it does not say); Capacity the items it is given at once.
	Kind     string `json:"kind"`
	Slots    int    `json:"slots,omitempty"`
	Capacity int    `json:"capacity"`
	// Running, Done and Red count its items: now, finished green, finished otherwise.
	Running int `json:"running"`
	Done    int `json:"done"`
	Red     int `json:"red"`
}

// Pool hands each item the least busy server with room, so that work spreads over the servers
// in order and none takes more than its capacity or the run more than jobs at once.
type Pool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	servers []Server
	jobs    int
	running int
}

// New is a pool of servers, each with its Capacity set, running at most jobs items at once.
func New(servers []Server, jobs int) *Pool {
	p := &Pool{servers: servers, jobs: jobs}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// Capacity is what a server is given at once: the slots it reports, else an even share of the
// jobs; never more than the jobs, never less than one.
func Capacity(slots, jobs, servers int) int {
	c := (jobs + servers - 1) / servers
	if slots > 0 {
		c = slots
	}
	return max(1, min(c, jobs))
}

// Acquire waits for a server with room and takes it; ctx ending returns -1.
func (p *Pool) Acquire(ctx context.Context) int { return p.AcquireAmong(ctx, nil) }

// AcquireAmong is Acquire among the servers ok accepts (nil accepts all): an item a few servers
// can run waits for one of them. With none acceptable it returns -1 at once.
func (p *Pool) AcquireAmong(ctx context.Context, ok func(server int) bool) int {
	if ok != nil && !slices.ContainsFunc(p.indexes(), ok) {
		return -1
	}
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cond.Broadcast()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if ctx.Err() != nil {
			return -1
		}
		best := -1
		if p.running < p.jobs {
			for i, s := range p.servers {
				if (ok == nil || ok(i)) && s.Running < s.Capacity && (best < 0 || s.Running < p.servers[best].Running) {
					best = i
				}
			}
		}
		if best >= 0 {
			p.servers[best].Running++
			p.running++
			return best
		}
		p.cond.Wait()
	}
}

func (p *Pool) indexes() []int {
	out := make([]int, len(p.servers))
	for i := range out {
		out[i] = i
	}
	return out
}

// Release gives server i's room back, counting its item green or not.
func (p *Pool) Release(i int, green bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.servers[i].Running--
	p.running--
	if green {
		p.servers[i].Done++
	} else {
		p.servers[i].Red++
	}
	p.cond.Broadcast()
}

// Len is the number of servers.
func (p *Pool) Len() int { return len(p.servers) }

// URL is server i's endpoint.
func (p *Pool) URL(i int) string { return p.servers[i].URL }

// Snapshot is the servers' counts now.
func (p *Pool) Snapshot() []Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Server(nil), p.servers...)
}

// Endpoints are the pool's endpoints as the settings give them: the servers setting, each once
// and in its order, else the one base URL.
func Endpoints(s *packs.Settings) []string {
	var urls []string
	for _, u := range strings.Split(s.String(packs.Servers), ",") {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		urls = []string{s.String(packs.BaseURL)}
	}
	return urls
}

// Probed is one endpoint of the pool as its probe found it: the server's word on what it is and
// serves, or why it did not answer.
type Probed struct {
	URL string
	// Client is the endpoint's client, under the loopback rail; nil where the endpoint itself
	// was refused.
	Client *client.Client
	Info   *client.ServerInfo
	Err    error
}

// probeDeadline bounds one endpoint's probe: a server that takes longer to say what it is will
// not serve a run either.
const probeDeadline = 30 * time.Second

// Probe checks each endpoint against the loopback rail and asks the server there what it is,
// all of them at once. An endpoint the rail refuses is the error, before any is asked: it is
// the operator's setting, wrong for every item; a server that does not answer is its Probed's
// Err, for the caller to decide on. dial and transport replace the network as a run's do.
func Probe(ctx context.Context, s *packs.Settings, dial rails.DialFunc, transport http.RoundTripper) ([]Probed, error) {
	urls := Endpoints(s)
	out := make([]Probed, len(urls))
	for i, raw := range urls {
		u, err := rails.ParseEndpoint(raw, s.Bool(packs.AllowRemote))
		if err != nil {
			return nil, err
		}
		out[i] = Probed{URL: raw, Client: client.New(client.Config{BaseURL: u, AllowRemote: s.Bool(packs.AllowRemote),
			Timeout: s.Duration(packs.Timeout), Dial: dial, Transport: transport})}
	}
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, probeDeadline)
			defer cancel()
			out[i].Info, out[i].Err = out[i].Client.Probe(pctx)
		})
	}
	wg.Wait()
	return out, nil
}

// Servers are the pool's servers for probed endpoints that answered, each with its capacity of
// jobs; the others are left out.
func Servers(probed []Probed, jobs int) []Server {
	var out []Server
	for _, p := range probed {
		if p.Err == nil {
			out = append(out, Server{URL: p.URL, Kind: string(p.Info.Kind), Slots: p.Info.Slots})
		}
	}
	for i := range out {
		out[i].Capacity = Capacity(out[i].Slots, jobs, len(out))
	}
	return out
}
