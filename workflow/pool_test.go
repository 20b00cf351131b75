package workflow

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
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
			assert.Equal(t, c.want, capacity(c.slots, c.jobs, c.servers))
		})
	}
}

// Items spread over the servers in order, least busy first, none over its capacity nor the run
// over its jobs.
func TestPoolSpreadsAndBounds(t *testing.T) {
	p := newPool([]Server{{URL: "a", Capacity: 2}, {URL: "b", Capacity: 2}}, 3)
	ctx := context.Background()
	got := []int{p.acquire(ctx), p.acquire(ctx), p.acquire(ctx)}
	assert.Equal(t, []int{0, 1, 0}, got)

	// The fourth waits for the run's jobs, not a server's room, and takes the freed server's place.
	next := make(chan int)
	go func() { next <- p.acquire(ctx) }()
	p.release(1, true)
	assert.Equal(t, 1, <-next)
	snap := p.snapshot()
	assert.Equal(t, 2, snap[0].Running)
	assert.Equal(t, 1, snap[1].Running)
	assert.Equal(t, 1, snap[1].Done)

	p.release(0, false)
	assert.Equal(t, 1, p.snapshot()[0].Red)
}

// A run stopped while an item waits for a server: the wait ends with no server.
func TestPoolAcquireEndsWithItsContext(t *testing.T) {
	p := newPool([]Server{{URL: "a", Capacity: 1}}, 1)
	assert.Equal(t, 0, p.acquire(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	got := 0
	go func() {
		defer wg.Done()
		got = p.acquire(ctx)
	}()
	cancel()
	wg.Wait()
	assert.Equal(t, -1, got)
}
