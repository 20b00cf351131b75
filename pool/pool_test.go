package pool

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

func TestCapacity(t *testing.T) {
	for _, c := range []struct {
		name                 string
		slots, jobs, servers int
		want                 int
	}{
		{"an even share of the jobs", 0, 4, 2, 2},
		{"rounded up", 0, 5, 2, 3},
		{"the slots a server reports", 4, 8, 2, 4},
		{"never more than the jobs", 8, 2, 1, 2},
		{"never less than one", 0, 1, 3, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Capacity(c.slots, c.jobs, c.servers))
		})
	}
}

// Items spread over the servers in order, least busy first, none over its capacity nor the run
// over its jobs.
func TestPoolSpreadsAndBounds(t *testing.T) {
	p := New([]Server{{URL: "a", Capacity: 2}, {URL: "b", Capacity: 2}}, 3)
	ctx := context.Background()
	got := []int{p.Acquire(ctx), p.Acquire(ctx), p.Acquire(ctx)}
	assert.Equal(t, []int{0, 1, 0}, got)

	// The fourth waits for the run's jobs, not a server's room, and takes the freed server's place.
	next := make(chan int)
	go func() { next <- p.Acquire(ctx) }()
	p.Release(1, true)
	assert.Equal(t, 1, <-next)
	snap := p.Snapshot()
	assert.Equal(t, 2, snap[0].Running)
	assert.Equal(t, 1, snap[1].Running)
	assert.Equal(t, 1, snap[1].Done)

	p.Release(0, false)
	assert.Equal(t, 1, p.Snapshot()[0].Red)
}

// A run stopped while an item waits for a server: the wait ends with no server.
func TestPoolAcquireEndsWithItsContext(t *testing.T) {
	p := New([]Server{{URL: "a", Capacity: 1}}, 1)
	assert.Equal(t, 0, p.Acquire(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	got := 0
	go func() {
		defer wg.Done()
		got = p.Acquire(ctx)
	}()
	cancel()
	wg.Wait()
	assert.Equal(t, -1, got)
}

// An item only some servers can run waits for one of them, however idle the others are; one no
// server can run is told so at once.
func TestPoolAcquireAmong(t *testing.T) {
	p := New([]Server{{URL: "a", Capacity: 1}, {URL: "b", Capacity: 1}}, 2)
	ctx := context.Background()
	onlyB := func(i int) bool { return i == 1 }
	assert.Equal(t, 1, p.AcquireAmong(ctx, onlyB))
	next := make(chan int)
	go func() { next <- p.AcquireAmong(ctx, onlyB) }()
	// a is free, and the run has room, but the waiting item cannot run there.
	assert.Equal(t, 0, p.Acquire(ctx))
	p.Release(1, true)
	assert.Equal(t, 1, <-next)
	assert.Equal(t, -1, p.AcquireAmong(ctx, func(int) bool { return false }))
}

func TestEndpoints(t *testing.T) {
	for _, c := range []struct {
		name, servers string
		want          []string
	}{
		{"the base URL alone", "", []string{"http://127.0.0.1:9/v1"}},
		{"each once, in order", " http://127.0.0.1:2/v1,http://127.0.0.1:1/v1, http://127.0.0.1:2/v1,", []string{"http://127.0.0.1:2/v1", "http://127.0.0.1:1/v1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := (&packs.Composition{}).Resolve("", nil, map[string]string{"base-url": "http://127.0.0.1:9/v1", "servers": c.servers})
			require.NoError(t, err)
			assert.Equal(t, c.want, Endpoints(s))
		})
	}
}
