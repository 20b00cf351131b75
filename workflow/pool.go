package workflow

import (
	"context"
	"sync"
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

// pool hands each item the least busy server with room, so that work spreads over the servers
// in order and none takes more than its capacity or the run more than jobs at once.
type pool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	servers []Server
	jobs    int
	running int
}

func newPool(servers []Server, jobs int) *pool {
	p := &pool{servers: servers, jobs: jobs}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// capacity is what a server is given at once: the slots it reports, else an even share of the
// jobs; never more than the jobs, never less than one.
func capacity(slots, jobs, servers int) int {
	c := (jobs + servers - 1) / servers
	if slots > 0 {
		c = slots
	}
	return max(1, min(c, jobs))
}

// acquire waits for a server with room and takes it; ctx ending returns -1.
func (p *pool) acquire(ctx context.Context) int {
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
				if s.Running < s.Capacity && (best < 0 || s.Running < p.servers[best].Running) {
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

// release gives server i's room back, counting its item green or not.
func (p *pool) release(i int, green bool) {
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

// snapshot is the servers' counts now.
func (p *pool) snapshot() []Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Server(nil), p.servers...)
}
