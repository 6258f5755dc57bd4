package pace

import (
	"context"
	"errors"
	"testing"
	"time"
)

// clock is a test clock: waits are recorded and end at once (or never,
// when block is set).
type clock struct {
	t     time.Time
	waits []time.Duration
	block bool
}

func (c *clock) pacer(interval time.Duration) *Pacer {
	p := New(interval)
	p.now = func() time.Time { return c.t }
	p.after = func(d time.Duration) <-chan time.Time {
		c.waits = append(c.waits, d)
		ch := make(chan time.Time, 1)
		if !c.block {
			c.t = c.t.Add(d)
			ch <- c.t
		}
		return ch
	}
	return p
}

func TestWait(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		interval time.Duration
		gaps     []time.Duration // time between a send and the next Wait
		want     []time.Duration // the waits, in order
	}{
		{"first send goes at once", ms, nil, nil},
		{"busy: wait out the rest of the interval", ms, []time.Duration{200 * time.Microsecond, 0}, []time.Duration{800 * time.Microsecond, ms}},
		{"quiet: no wait", ms, []time.Duration{2 * ms, ms}, nil},
		{"off", 0, []time.Duration{0, 0}, nil},
		{"negative is off", -ms, []time.Duration{0}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1000, 0)}
			p := c.pacer(tc.interval)
			ctx := context.Background()
			if err := p.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			p.Sent()
			for _, g := range tc.gaps {
				c.t = c.t.Add(g)
				if err := p.Wait(ctx); err != nil {
					t.Fatal(err)
				}
				p.Sent()
			}
			if len(c.waits) != len(tc.want) {
				t.Fatalf("waits %v, want %v", c.waits, tc.want)
			}
			for i := range tc.want {
				if c.waits[i] != tc.want[i] {
					t.Errorf("waits %v, want %v", c.waits, tc.want)
				}
			}
		})
	}
}

func TestWaitCancelled(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0), block: true}
	p := c.pacer(time.Second)
	p.Sent()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want context.Canceled", err)
	}
}

// TestTimer runs the real timer path once: a wait of a nanosecond ends.
func TestTimer(t *testing.T) {
	p := New(time.Nanosecond)
	defer p.Stop()
	p.Sent()
	for range 3 {
		if err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		p.Sent()
	}
}
