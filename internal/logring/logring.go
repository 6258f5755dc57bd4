// Package logring keeps the last records a process logged, so that they
// can be read after the fact or sent to the scheduler.
package logring

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Record is one log record, flattened.
type Record struct {
	Time    time.Time
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// Ring holds the last N records and, optionally, a queue of records not
// yet taken by Drain.
type Ring struct {
	mu      sync.Mutex
	buf     []Record
	next    int
	full    bool
	queue   []Record
	queueOn bool
	maxQ    int
	dropped uint64
	notify  func()
}

// DefaultSize is the number of records a ring keeps by default.
const DefaultSize = 10_000

// OnQueue sets a function called (without locks held, so it must not
// block) each time a record is queued for Drain: a worker wakes its sender
// with it, so that records reach the scheduler as they happen.
func (r *Ring) OnQueue(f func()) {
	r.mu.Lock()
	r.notify = f
	r.mu.Unlock()
}

// New returns a ring of n records (DefaultSize when n <= 0). With queue,
// records are also queued for Drain (at most n; older ones are dropped
// first).
func New(n int, queue bool) *Ring {
	if n <= 0 {
		n = DefaultSize
	}
	return &Ring{buf: make([]Record, n), queueOn: queue, maxQ: n}
}

func (r *Ring) add(rec Record) {
	r.mu.Lock()
	notify := r.notify
	defer func() {
		r.mu.Unlock()
		if notify != nil && r.queueOn {
			notify()
		}
	}()
	r.buf[r.next] = rec
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	if r.queueOn {
		if len(r.queue) >= r.maxQ {
			r.queue = r.queue[1:]
			r.dropped++
		}
		r.queue = append(r.queue, rec)
	}
}

// Last returns the last n kept records (all when n <= 0), oldest first.
func (r *Ring) Last(n int) []Record {
	all := r.Records()
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// Records returns the kept records, oldest first.
func (r *Ring) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Record
	if r.full {
		out = append(out, r.buf[r.next:]...)
	}
	return append(out, r.buf[:r.next]...)
}

// Drain takes the queued records.
func (r *Ring) Drain() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queue
	r.queue = nil
	return q
}

// Handler returns a slog handler that keeps records of at least level in
// r and passes every record on to next (which may be nil).
func (r *Ring) Handler(next slog.Handler, level slog.Leveler) slog.Handler {
	return Tee(next, level, r.add)
}

// Tee returns a slog handler that gives sink each record of at least level
// (Info if nil), its attributes flattened to text (Flatten), and passes
// every record on to next (which may be nil).
func Tee(next slog.Handler, level slog.Leveler, sink func(Record)) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &handler{sink: sink, next: next, level: level}
}

type handler struct {
	sink   func(Record)
	next   slog.Handler
	level  slog.Leveler
	attrs  []slog.Attr // of WithAttrs, their keys with the groups before them
	prefix string      // the groups of WithGroup, each followed by a dot
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level.Level() || (h.next != nil && h.next.Enabled(ctx, l))
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= h.level.Level() {
		out := Record{Time: rec.Time, Level: rec.Level, Message: rec.Message, Attrs: make(map[string]string, len(h.attrs)+rec.NumAttrs())}
		for _, a := range h.attrs {
			Flatten(out.Attrs, "", a)
		}
		rec.Attrs(func(a slog.Attr) bool {
			Flatten(out.Attrs, h.prefix, a)
			return true
		})
		h.sink(out)
	}
	if h.next != nil && h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

// Flatten adds a to m as text: a group's attributes under their dotted
// names (prefix "g." for group g), nothing for an attribute without a key,
// as slog's handlers do.
func Flatten(m map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, x := range v.Group() {
			Flatten(m, p, x)
		}
		return
	}
	if a.Key == "" {
		return
	}
	m[prefix+a.Key] = v.String()
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range as {
		if h.prefix != "" {
			a.Key = h.prefix + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	if h.next != nil {
		c.next = h.next.WithAttrs(as)
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	if h.next != nil {
		c.next = h.next.WithGroup(name)
	}
	return &c
}
