package seedreserve

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// countingRecorder counts what a Reserver records.
type countingRecorder struct {
	mu        sync.Mutex
	results   map[string]int // operation/result
	conflicts int
	batches   []int
	refused   map[string]int // reason
}

func (c *countingRecorder) ObserveReservationRefused(store, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused == nil {
		c.refused = map[string]int{}
	}
	c.refused[store+"/"+reason]++
}

func (c *countingRecorder) ObserveReservation(operation, result string, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.results == nil {
		c.results = map[string]int{}
	}
	c.results[operation+"/"+result]++
}

func (c *countingRecorder) ObserveReservationConflict() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conflicts++
}

func (c *countingRecorder) ObserveReservationBatch(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches = append(c.batches, n)
}

func (c *countingRecorder) conflictCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conflicts
}

func TestRecorderResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"ok", nil, metrics.ReservationOK},
		{"full", &cache.CapacityError{}, metrics.ReservationFull},
		{"wrapped full", errors.Join(errors.New("x"), &cache.CapacityError{}), metrics.ReservationFull},
		{"error", errors.New("timeout"), metrics.ReservationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingRecorder{}
			recorder{c}.observe(opReserve, tc.err, time.Millisecond)
			assert.Equal(t, map[string]int{"reserve/" + tc.want: 1}, c.results)
		})
	}
	// Without a recorder nothing is recorded, and nothing fails.
	assert.NotPanics(t, func() {
		r := recorder{}
		r.observe(opCheck, nil, 0)
		r.conflict()
		r.observeBatch(1)
	})
	// A nil *metrics.Recorder is a valid Recorder.
	var none *metrics.Recorder
	assert.NotPanics(t, func() { recorder{none}.observe(opCheck, nil, 0) })
}
