package diagnostics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// seq returns n transition events numbered from first in Compute.
func seq(first, n int) []Event {
	ev := make([]Event, n)
	for i := range ev {
		ev[i] = Event{Time: time.Unix(1, 0), Kind: TaskTransition, Compute: uint64(first + i)}
	}
	return ev
}

// collector gathers what a subscription delivers.
type collector struct {
	mu      sync.Mutex
	events  []Event
	batches int
}

func (c *collector) add(b []Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, b...)
	c.batches++
}

func (c *collector) ids() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]uint64, len(c.events))
	for i, e := range c.events {
		ids[i] = e.Compute
	}
	return ids
}

func checkSeq(t *testing.T, ids []uint64, n int) {
	t.Helper()
	if len(ids) != n {
		t.Fatalf("got %d events, want %d", len(ids), n)
	}
	for i, id := range ids {
		if id != uint64(i) {
			t.Fatalf("event %d has id %d: out of order", i, id)
		}
	}
}

func TestPublishDeliversInOrder(t *testing.T) {
	tests := []struct {
		name        string
		subscribers int
		publishes   int
		batch       int
	}{
		{"one by one", 1, 1000, 1},
		{"batches", 1, 100, 64},
		{"three subscribers", 3, 200, 7},
		{"empty publishes", 2, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHub()
			cs := make([]*collector, tt.subscribers)
			subs := make([]*Subscription, tt.subscribers)
			for i := range cs {
				cs[i] = &collector{}
				subs[i] = h.Subscribe(cs[i].add)
			}
			for p := range tt.publishes {
				h.Publish(seq(p*tt.batch, tt.batch)...)
			}
			h.Close()
			for i, c := range cs {
				checkSeq(t, c.ids(), tt.publishes*tt.batch)
				if d := subs[i].Dropped(); d != 0 {
					t.Errorf("subscriber %d dropped %d events", i, d)
				}
			}
		})
	}
}

func TestConcurrentPublishersKeepTheirOrder(t *testing.T) {
	const publishers, per = 8, 500
	h := NewHub()
	c := &collector{}
	s := h.Subscribe(c.add)
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range per {
				h.Publish(Event{Kind: TaskTransition, Worker: fmt.Sprint(p), Compute: uint64(i)})
			}
		})
	}
	wg.Wait()
	s.Close()
	next := make(map[string]uint64)
	for _, e := range c.events {
		if e.Compute != next[e.Worker] {
			t.Fatalf("publisher %s: got event %d, want %d", e.Worker, e.Compute, next[e.Worker])
		}
		next[e.Worker]++
	}
	for p := range publishers {
		if n := next[fmt.Sprint(p)]; n != per {
			t.Errorf("publisher %d: got %d events, want %d", p, n, per)
		}
	}
}

func TestDropsWhenSubscriberBlocks(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		publishes int // after the first event, which blocks the subscriber
		batch     int
		delivered int
		dropped   uint64
	}{
		{"one by one", 10, 25, 1, 1 + 10, 15},
		{"batch larger than the room", 10, 1, 25, 1 + 10, 15},
		{"batches fill exactly", 8, 3, 4, 1 + 8, 4},
		{"within the bound", 100, 5, 10, 1 + 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHub()
			defer h.Close()
			entered := make(chan struct{})
			release := make(chan struct{})
			c := &collector{}
			first := true
			s := h.Subscribe(func(b []Event) {
				if first {
					first = false
					close(entered)
					<-release
				}
				c.add(b)
			}, QueueLimit(tt.limit))

			h.Publish(seq(0, 1)...)
			<-entered // the subscriber holds event 0 and blocks
			for p := range tt.publishes {
				h.Publish(seq(1+p*tt.batch, tt.batch)...)
			}
			if got := s.Dropped(); got != tt.dropped {
				t.Errorf("Dropped() = %d while blocked, want %d", got, tt.dropped)
			}
			close(release)
			s.Close()
			checkSeq(t, c.ids(), tt.delivered)
			if got := s.Dropped(); got != tt.dropped {
				t.Errorf("Dropped() = %d, want %d", got, tt.dropped)
			}
		})
	}
}

func TestCloseDeliversQueuedEvents(t *testing.T) {
	h := NewHub()
	release := make(chan struct{})
	entered := make(chan struct{})
	c := &collector{}
	first := true
	s := h.Subscribe(func(b []Event) {
		if first {
			first = false
			close(entered)
			<-release
		}
		c.add(b)
	})
	h.Publish(seq(0, 1)...)
	<-entered
	h.Publish(seq(1, 99)...)
	close(release)
	s.Close()
	checkSeq(t, c.ids(), 100)
	h.Close()
}

func TestCloseIsIdempotent(t *testing.T) {
	h := NewHub()
	c := &collector{}
	s1 := h.Subscribe(c.add)
	s2 := h.Subscribe(c.add)
	if !h.Active() {
		t.Fatal("hub with subscribers is not active")
	}
	s1.Close()
	s1.Close()
	if !h.Active() {
		t.Fatal("hub with one subscriber left is not active")
	}
	h.Close()
	h.Close()
	s2.Close()
	if h.Active() {
		t.Fatal("closed hub is active")
	}
	h.Publish(seq(0, 3)...) // goes nowhere, must not panic

	late := h.Subscribe(func([]Event) { t.Error("subscription to a closed hub got events") })
	h.Publish(seq(0, 3)...)
	late.Close()
	late.Close()
	if len(c.ids()) != 0 {
		t.Errorf("got %d events after close", len(c.ids()))
	}
}

func TestCloseManyConcurrently(t *testing.T) {
	h := NewHub()
	s := h.Subscribe(func([]Event) {})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(s.Close)
		wg.Go(h.Close)
		wg.Go(func() { h.Publish(seq(0, 2)...) })
	}
	wg.Wait()
}

func TestNilHub(t *testing.T) {
	var h *Hub
	if h.Active() {
		t.Error("nil hub is active")
	}
	h.Publish(Event{Kind: Spill})
	h.Close()
}

func TestActive(t *testing.T) {
	h := NewHub()
	if h.Active() {
		t.Error("new hub is active")
	}
	s := h.Subscribe(func([]Event) {})
	if !h.Active() {
		t.Error("hub with a subscriber is not active")
	}
	s.Close()
	if h.Active() {
		t.Error("hub whose subscriber left is active")
	}
	h.Close()
}

func TestFlushWaitsForDelivery(t *testing.T) {
	h := NewHub()
	defer h.Close()
	c := &collector{}
	s := h.Subscribe(c.add)
	for i := range 50 {
		h.Publish(seq(i*3, 3)...)
		s.Flush()
		checkSeq(t, c.ids(), (i+1)*3)
	}
	s.Close()
	s.Flush() // after Close: returns at once
}

func TestPublishStampsZeroTimes(t *testing.T) {
	h := NewHub()
	c := &collector{}
	s := h.Subscribe(c.add)
	given := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	before := time.Now()
	events := []Event{{Kind: Spill}, {Kind: Unspill, Time: given}}
	h.Publish(events...)
	s.Close()
	h.Close()
	if !events[0].Time.IsZero() {
		t.Error("Publish changed the caller's events")
	}
	if got := c.events[0].Time; got.Before(before) {
		t.Errorf("zero time stamped as %v, before the call", got)
	}
	if got := c.events[1].Time; !got.Equal(given) {
		t.Errorf("time %v replaced by %v", given, got)
	}
}

func TestSubscriberPanicIsRecovered(t *testing.T) {
	h := NewHub()
	c := &collector{}
	calls := 0
	s := h.Subscribe(func(b []Event) {
		calls++
		if calls == 1 {
			panic("boom")
		}
		c.add(b)
	})
	h.Publish(seq(0, 1)...)
	s.Flush()
	h.Publish(seq(1, 2)...)
	s.Close()
	h.Close()
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Err() = %v, want the panic", err)
	}
	if got := c.ids(); len(got) != 2 || got[0] != 1 {
		t.Errorf("after the panic got %v, want [1 2]", got)
	}
}

func BenchmarkPublish(b *testing.B) {
	for _, subscribers := range []int{0, 1, 4} {
		for _, batch := range []int{1, 64} {
			b.Run(fmt.Sprintf("subscribers=%d/batch=%d", subscribers, batch), func(b *testing.B) {
				h := NewHub()
				var subs []*Subscription
				for range subscribers {
					subs = append(subs, h.Subscribe(func([]Event) {}))
				}
				events := make([]Event, batch)
				for i := range events {
					events[i] = Event{Time: time.Now(), Kind: TaskTransition, Compute: 1,
						Key: "sum-3fa2c1d0-4", Prefix: "sum", From: "processing", To: "memory",
						Worker: "local-3", Duration: time.Millisecond, Bytes: 1 << 20}
				}
				b.ResetTimer()
				for b.Loop() {
					h.Publish(events...)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
				h.Close()
				var dropped uint64
				for _, s := range subs {
					dropped += s.Dropped()
				}
				b.ReportMetric(float64(dropped)/float64(b.N*batch*max(subscribers, 1)), "dropped/event")
			})
		}
	}
}

func BenchmarkPublishParallel(b *testing.B) {
	h := NewHub()
	s := h.Subscribe(func([]Event) {})
	events := make([]Event, 64)
	for i := range events {
		events[i] = Event{Time: time.Now(), Kind: TaskTransition, Key: "sum-3fa2c1d0-4", To: "memory"}
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Publish(events...)
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/event")
	h.Close()
	b.ReportMetric(float64(s.Dropped())/float64(b.N*64), "dropped/event")
}

func BenchmarkActive(b *testing.B) {
	h := NewHub()
	n := 0
	for b.Loop() {
		if h.Active() {
			n++
		}
	}
	_ = n
}

func TestSpareChunksAreGivenBack(t *testing.T) {
	h := NewHub()
	defer h.Close()
	entered := make(chan struct{})
	release := make(chan struct{})
	first := true
	s := h.Subscribe(func([]Event) {
		if first {
			first = false
			close(entered)
			<-release
		}
	})
	h.Publish(seq(0, 1)...)
	<-entered
	const chunks = 40 // a burst the subscriber cannot keep up with
	for i := range chunks {
		h.Publish(seq(i*chunkSize, chunkSize)...)
	}
	close(release)
	s.Flush()

	nfree := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.nfree
	}
	if n := nfree(); n < chunks {
		t.Fatalf("%d free chunks after the burst, want at least %d kept for reuse", n, chunks)
	}
	for range 2 { // the first trim only learns what the last interval used
		s.mu.Lock()
		s.lastTrim = time.Time{}
		s.mu.Unlock()
		s.trimFree()
	}
	if n := nfree(); n != maxFree {
		t.Errorf("%d free chunks once idle, want %d", n, maxFree)
	}
	s.Close()
}
