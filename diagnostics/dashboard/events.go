package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// keepAlive is how often a stream with nothing to send says it is alive,
// so that proxies and browsers do not take it for dead.
const keepAlive = 15 * time.Second

// retry is how long after a stream broke a browser opens it again.
const retry = 2 * time.Second

// hub makes the events of the streams of GET /api/events. Each topic
// with its parameters is a feed, made once per refresh whatever the
// number of streams that watch it, and only while one does: a feed is
// created by the first stream that asks for it and dropped with the last.
// One goroutine refreshes every feed, and runs only while there are
// feeds.
type hub struct {
	src      Source
	interval time.Duration // the base period of the refreshes
	now      func() time.Time
	ticker   func(time.Duration) (<-chan time.Time, func())
	ticked   func() // for tests: called after each round of refreshes, when not nil

	mu    sync.Mutex
	feeds map[string]*feed
	stop  chan struct{} // closed to stop the refreshing goroutine; nil when none runs
}

// feed is a topic with its parameters, and the event it made last.
type feed struct {
	name  string
	q     query
	every int
	ticks int // base intervals since its last refresh; of the refreshing goroutine

	refreshing sync.Mutex // one Source call at a time

	// Under hub.mu:
	event   []byte // the last event: "event: name\ndata: JSON\n\n"
	version uint64 // counts the changes of event; 0 before the first
	streams map[*stream]struct{}
}

// stream is one GET /api/events.
type stream struct {
	wake chan struct{} // a feed changed; capacity 1
}

func newHub(src Source, interval time.Duration) *hub {
	return &hub{src: src, interval: interval, now: time.Now, ticker: realTicker, feeds: map[string]*feed{}}
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// subscribe adds st to the feeds of the queries, creating those nobody
// watched, and returns them.
func (h *hub) subscribe(st *stream, names []string, qs []query) []*feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	fs := make([]*feed, len(qs))
	for i, q := range qs {
		key := names[i] + "?" + q.key
		f := h.feeds[key]
		if f == nil {
			f = &feed{name: names[i], q: q, every: topicNamed(names[i]).every, streams: map[*stream]struct{}{}}
			h.feeds[key] = f
		}
		f.streams[st] = struct{}{}
		fs[i] = f
	}
	if h.stop == nil {
		h.stop = make(chan struct{})
		tick, stop := h.ticker(h.interval)
		go h.run(h.stop, tick, stop)
	}
	return fs
}

// unsubscribe takes st out of its feeds, drops the feeds nobody watches
// any more, and stops refreshing when there are none.
func (h *hub) unsubscribe(st *stream, fs []*feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range fs {
		delete(f.streams, st)
		if len(f.streams) == 0 {
			for key, g := range h.feeds {
				if g == f {
					delete(h.feeds, key)
				}
			}
		}
	}
	if len(h.feeds) == 0 && h.stop != nil {
		close(h.stop)
		h.stop = nil
	}
}

// run refreshes each feed at its period until stop closes.
func (h *hub) run(stop <-chan struct{}, tick <-chan time.Time, stopTicker func()) {
	defer stopTicker()
	var due []*feed
	for {
		select {
		case <-stop:
			return
		case <-tick:
		}
		due = due[:0]
		h.mu.Lock()
		for _, f := range h.feeds {
			f.ticks++
			if f.ticks >= f.every {
				f.ticks = 0
				due = append(due, f)
			}
		}
		h.mu.Unlock()
		// One after the other: the Source is the scheduler, which is
		// better asked one thing at a time.
		for _, f := range due {
			h.refresh(f, false)
		}
		if h.ticked != nil {
			h.ticked()
		}
	}
}

// refresh makes the feed's event again, and wakes its streams when it
// changed. When first, only a feed that has no event yet is made.
func (h *hub) refresh(f *feed, first bool) {
	f.refreshing.Lock()
	defer f.refreshing.Unlock()
	if first {
		h.mu.Lock()
		made := f.version > 0
		h.mu.Unlock()
		if made {
			return
		}
	}
	ev := makeEvent(f.name, f.q, h.src, h.now())
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.version > 0 && bytes.Equal(ev, f.event) {
		return
	}
	f.event = ev
	f.version++
	for st := range f.streams {
		select {
		case st.wake <- struct{}{}:
		default: // it has a wake pending already
		}
	}
}

// makeEvent calls the Source for a topic and writes what it answered as
// an event: of the topic's name with the JSON of its endpoint, or, when
// the Source failed, a "topic-error" event of {"topic": name, "error":
// text}.
func makeEvent(name string, q query, src Source, now time.Time) []byte {
	v, err := q.fetch(src, now)
	var data []byte
	if err == nil {
		data, err = json.Marshal(v)
	}
	if err != nil {
		data, _ = json.Marshal(struct {
			Topic string `json:"topic"`
			Error string `json:"error"`
		}{name, err.Error()})
		name = "topic-error"
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(name) + 16)
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data) // JSON from encoding/json holds no newline
	b.WriteString("\n\n")
	return b.Bytes()
}

// events serves GET /api/events?topics=a,b&...: a stream of Server-Sent
// Events of the topics named, each with its parameters from the same
// query string. Every topic is sent at once, then again each time it
// changed, at its period; a comment keeps the stream alive when nothing
// changes. The stream ends when the client goes or the handler's context
// ends.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	names, qs, err := readTopics(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // nginx: pass the events on as they come
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's WriteTimeout; fine when it has none
	w.WriteHeader(http.StatusOK)
	// The browser reconnects this long after the stream broke.
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", h.retry.Milliseconds()); err != nil {
		return
	}

	st := &stream{wake: make(chan struct{}, 1)}
	fs := h.hub.subscribe(st, names, qs)
	defer h.hub.unsubscribe(st, fs)
	sent := make([]uint64, len(fs))
	// Each topic at once, as soon as it is made: a slow one does not
	// hold the others back.
	for i, f := range fs {
		h.hub.refresh(f, true)
		h.hub.mu.Lock()
		ev, v := f.event, f.version
		h.hub.mu.Unlock()
		if _, err := w.Write(ev); err != nil {
			return
		}
		sent[i] = v
		if err := rc.Flush(); errors.Is(err, http.ErrNotSupported) {
			// A ResponseWriter that cannot flush (a middleware's) would
			// hold every event back: end the stream after the first
			// ones, and the browser asks again after the retry time,
			// polling.
			continue
		} else if err != nil {
			return
		}
	}
	if err := rc.Flush(); err != nil {
		return
	}
	alive := time.NewTicker(h.keepAlive)
	defer alive.Stop()
	ctx := r.Context()
	for {
		for i, f := range fs {
			h.hub.mu.Lock()
			ev, v := f.event, f.version
			h.hub.mu.Unlock()
			if v != sent[i] {
				if _, err := w.Write(ev); err != nil {
					return
				}
				sent[i] = v
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-h.done:
			return
		case <-st.wake:
		case <-alive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
	}
}

// readTopics reads the topics of a GET /api/events and their parameters.
func readTopics(r *http.Request) ([]string, []query, error) {
	q := r.URL.Query()
	s := q.Get("topics")
	want := "a comma-separated list of the topics " + topicNames()
	if s == "" {
		return nil, nil, &paramError{"topics", s, want}
	}
	var names []string
	var qs []query
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" || slices.Contains(names, name) {
			continue
		}
		t := topicNamed(name)
		if t == nil {
			return nil, nil, &paramError{"topics", s, want + " (not " + name + ")"}
		}
		tq, err := t.parse(q)
		if err != nil {
			return nil, nil, fmt.Errorf("topic %s: %w", name, err)
		}
		names = append(names, name)
		qs = append(qs, tq)
	}
	if len(names) == 0 {
		return nil, nil, &paramError{"topics", s, want}
	}
	return names, qs, nil
}
