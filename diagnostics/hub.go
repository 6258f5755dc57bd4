package diagnostics

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueueLimit is how many events a subscription holds for delivery
// before it starts dropping new ones.
const DefaultQueueLimit = 1 << 20

// Hub passes events from executors to whoever listens: recorders, progress
// bars, dashboards, metrics. Publishing is cheap and never waits for a slow
// listener, and when nobody listens it costs one atomic load.
//
// A nil *Hub is valid: it is never Active and Publish does nothing.
type Hub struct {
	active atomic.Bool
	subs   atomic.Pointer[[]*Subscription]

	mu     sync.Mutex // serialises changes to subs and closed
	closed bool
}

// NewHub returns a hub with no subscribers.
func NewHub() *Hub {
	return &Hub{}
}

// Active reports whether anybody listens. Publishers check it before they
// build events, so that a run nobody watches pays nothing for them.
func (h *Hub) Active() bool {
	return h != nil && h.active.Load()
}

// Publish hands events to every subscriber, in order. It copies the events
// into each subscriber's queue and returns; it never waits for a subscriber
// to take them, so the caller may reuse the slice at once. A subscriber
// whose queue is full loses the events that do not fit (see
// Subscription.Dropped). Events whose Time is zero are stamped with the time
// of the call.
//
// Publish is safe to call from many goroutines; the events of one call are
// delivered in order and not interleaved with those of other calls.
// Publishing many events in one call is much cheaper than one at a time, and
// checking Active first saves building events nobody wants:
//
//	if hub.Active() {
//		batch = append(batch[:0], diagnostics.Event{...}, ...)
//		hub.Publish(batch...)
//	}
func (h *Hub) Publish(events ...Event) {
	if h == nil || len(events) == 0 {
		return
	}
	p := h.subs.Load()
	if p == nil || len(*p) == 0 {
		return
	}
	var now time.Time
	for i := range events {
		if events[i].Time.IsZero() {
			now = time.Now()
			break
		}
	}
	for _, s := range *p {
		s.push(events, now)
	}
}

// SubscribeOption configures a subscription.
type SubscribeOption func(*Subscription)

// QueueLimit bounds how many events wait for delivery to the subscriber
// (DefaultQueueLimit unless set). Events published while the queue is full
// are dropped and counted.
func QueueLimit(n int) SubscribeOption {
	return func(s *Subscription) {
		if n > 0 {
			s.limit = n
		}
	}
}

// Subscribe starts delivering published events to fn, in the order they
// were published, in batches, from a goroutine of the subscription's own.
// fn must not keep the slice after it returns (copy the events it needs),
// and must not call the subscription's Close or Flush.
//
// A panic in fn does not stop the program: it is recovered, reported by
// Err, and delivery goes on with the next batch.
//
// Subscribing to a closed hub returns a closed subscription.
func (h *Hub) Subscribe(fn func([]Event), opts ...SubscribeOption) *Subscription {
	s := &Subscription{
		hub:     h,
		fn:      fn,
		limit:   DefaultQueueLimit,
		wake:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	s.cond.L = &s.mu
	for _, o := range opts {
		o(s)
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.closed = true
		s.done = true
		close(s.quit)
		close(s.stopped)
		return s
	}
	go s.run()
	var subs []*Subscription
	if p := h.subs.Load(); p != nil {
		subs = slices.Clone(*p)
	}
	subs = append(subs, s)
	h.subs.Store(&subs)
	h.active.Store(true)
	return s
}

// remove takes s out of the hub's subscribers.
func (h *Hub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.subs.Load()
	if p == nil {
		return
	}
	i := slices.Index(*p, s)
	if i < 0 {
		return
	}
	subs := slices.Delete(slices.Clone(*p), i, i+1)
	h.subs.Store(&subs)
	h.active.Store(len(subs) > 0)
}

// Close closes every subscription (each delivers what it has queued) and
// returns when all of them have stopped. Later subscriptions are closed
// at once and later events go nowhere. Close is idempotent.
func (h *Hub) Close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.closed = true
	var subs []*Subscription
	if p := h.subs.Load(); p != nil {
		subs = *p
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

// Subscription delivers a hub's events to one function. It is returned by
// Hub.Subscribe.
type Subscription struct {
	hub   *Hub
	fn    func([]Event)
	limit int

	dropped atomic.Uint64

	mu        sync.Mutex
	cond      sync.Cond // signalled when delivered grows or delivery stops
	head      *chunk    // events waiting for delivery, oldest first
	tail      *chunk    // the chunk being filled
	queued    int       // events in head..tail
	free      *chunk    // delivered chunks, for reuse
	nfree     int
	freeLow   int // least nfree since lastTrim
	lastTrim  time.Time
	enqueued  uint64 // events accepted so far
	delivered uint64 // events handed to fn so far
	closed    bool   // no more events are accepted
	done      bool   // the delivery goroutine has stopped
	err       error  // first panic of fn

	wake      chan struct{} // buffered(1): the queue became non-empty
	quit      chan struct{} // closed by Close
	stopped   chan struct{} // closed when the delivery goroutine returns
	closeOnce sync.Once
}

// The queue is a list of fixed-size chunks, recycled through a free list:
// publishing copies events into the tail chunk and, once the queue's
// chunks have been allocated, allocates nothing and never copies a whole
// queue to grow it.
const (
	chunkSize = 256 // events per chunk; also the largest batch fn gets
	maxFree   = 16  // free chunks always kept
	trimEvery = time.Second
)

type chunk struct {
	events []Event // len: filled; cap: chunkSize
	next   *chunk
}

// push queues events for delivery. now, if not zero, replaces zero times.
func (s *Subscription) push(events []Event, now time.Time) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	n := len(events)
	if room := s.limit - s.queued; n > room {
		n = max(room, 0)
		s.dropped.Add(uint64(len(events) - n))
	}
	if n == 0 {
		s.mu.Unlock()
		return
	}
	wasEmpty := s.queued == 0
	s.queued += n
	s.enqueued += uint64(n)
	for rest := events[:n]; len(rest) > 0; {
		c := s.tail
		if c == nil || len(c.events) == cap(c.events) {
			c = s.newChunk()
		}
		at := len(c.events)
		k := min(len(rest), cap(c.events)-at)
		c.events = append(c.events, rest[:k]...)
		rest = rest[k:]
		if !now.IsZero() {
			for i := at; i < len(c.events); i++ {
				if c.events[i].Time.IsZero() {
					c.events[i].Time = now
				}
			}
		}
	}
	s.mu.Unlock()
	// The delivery goroutine takes the whole queue at once, so a wake-up is
	// pending whenever the queue is not empty: only the first push after a
	// take needs to send one.
	if wasEmpty {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// newChunk appends an empty chunk to the queue. Called with s.mu held.
func (s *Subscription) newChunk() *chunk {
	c := s.free
	if c != nil {
		s.free = c.next
		s.nfree--
		s.freeLow = min(s.freeLow, s.nfree)
		c.next = nil
	} else {
		c = &chunk{events: make([]Event, 0, chunkSize)}
	}
	if s.tail == nil {
		s.head = c
	} else {
		s.tail.next = c
	}
	s.tail = c
	return c
}

func (s *Subscription) run() {
	defer close(s.stopped)
	// trim fires while there are spare free chunks, so that an idle
	// subscription gives back what a burst made it keep.
	trim := time.NewTimer(trimEvery)
	defer trim.Stop()
	for {
		select {
		case <-s.wake:
			s.deliver()
		case <-trim.C:
		case <-s.quit:
			// push accepts nothing once closed is set, so one pass
			// empties the queue.
			s.deliver()
			s.mu.Lock()
			s.done = true
			s.head, s.tail, s.free, s.nfree = nil, nil, nil, 0
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		if s.trimFree() {
			trim.Reset(trimEvery)
		} else {
			trim.Stop()
		}
	}
}

// deliver hands everything queued to fn, one chunk per batch, and gives
// each chunk back for reuse as soon as fn is done with it, while it is
// still in the cache.
func (s *Subscription) deliver() {
	s.mu.Lock()
	c := s.head
	s.head, s.tail, s.queued = nil, nil, 0
	s.mu.Unlock()
	for c != nil {
		s.call(c.events)
		next := c.next
		n := len(c.events)
		s.mu.Lock()
		// Not cleared: what a free chunk still references is overwritten
		// on reuse, and trimFree bounds it once the queue drains.
		c.events = c.events[:0]
		c.next = s.free
		s.free = c
		s.nfree++
		s.delivered += uint64(n)
		s.cond.Broadcast()
		s.mu.Unlock()
		c = next
	}
}

// trimFree gives back the free chunks that were not needed during the last
// trimEvery, keeping at least maxFree, and reports whether more than
// maxFree are left. Keeping the chunks while the load
// lasts matters: if the publisher had to allocate new ones, the garbage
// collector would run and slow down both publisher and subscriber, which
// then falls further behind.
func (s *Subscription) trimFree() (more bool) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastTrim) >= trimEvery {
		s.lastTrim = now
		if unused := min(s.freeLow, s.nfree-maxFree); unused > 0 {
			// Keep the first chunks: the most recently used, still
			// in the cache.
			c := s.free
			for range s.nfree - unused - 1 {
				c = c.next
			}
			for rest := c.next; rest != nil; {
				next := rest.next
				rest.next = nil
				rest = next
			}
			c.next = nil
			s.nfree -= unused
		}
		s.freeLow = s.nfree
	}
	return s.nfree > maxFree
}

func (s *Subscription) call(batch []Event) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("diagnostics: subscriber panicked: %v\n%s", r, debug.Stack())
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
		}
	}()
	s.fn(batch)
}

// Flush waits until every event queued before the call has been delivered
// (fn has returned for it). It must not be called from fn.
func (s *Subscription) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := s.enqueued
	for s.delivered < target && !s.done {
		s.cond.Wait()
	}
}

// Close stops the subscription: it takes no more events, delivers what it
// has queued, and returns when its goroutine has stopped. Close is
// idempotent and must not be called from fn.
func (s *Subscription) Close() {
	s.closeOnce.Do(func() {
		if s.hub != nil {
			s.hub.remove(s)
		}
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		select {
		case <-s.quit:
		default:
			close(s.quit)
		}
	})
	<-s.stopped
}

// Dropped returns how many events were dropped because the queue was full.
func (s *Subscription) Dropped() uint64 {
	return s.dropped.Load()
}

// Err returns the first panic of the subscriber's function, with its stack,
// or nil.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
