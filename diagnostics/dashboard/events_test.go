package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// clockwork drives the refreshes of a handler's streams: tick makes them
// refresh once, and returns when they did.
type clockwork struct {
	c    chan time.Time
	done chan struct{}
}

func newClockwork() *clockwork {
	return &clockwork{c: make(chan time.Time), done: make(chan struct{})}
}

func (cw *clockwork) option() Option {
	return func(c *config) {
		c.ticker = func(time.Duration) (<-chan time.Time, func()) { return cw.c, func() {} }
		c.ticked = func() { cw.done <- struct{}{} }
	}
}

func (cw *clockwork) tick(t *testing.T) {
	t.Helper()
	select {
	case cw.c <- time.Time{}:
	case <-time.After(10 * time.Second):
		t.Fatal("no stream refreshes: nobody took the tick")
	}
	<-cw.done
}

// eventServer serves h, and says on ended each time a request of it ends.
type eventServer struct {
	*httptest.Server
	h     *handler
	ended chan string
}

func newEventServer(t *testing.T, src Source, opts ...Option) *eventServer {
	h := newHandler(src, opts...)
	es := &eventServer{h: h, ended: make(chan string, 16)}
	es.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.root.ServeHTTP(w, r)
		es.ended <- r.URL.RequestURI()
	}))
	t.Cleanup(es.Close)
	return es
}

// waitEnded waits for the end of a request to the server.
func (es *eventServer) waitEnded(t *testing.T) string {
	t.Helper()
	select {
	case uri := <-es.ended:
		return uri
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
		return ""
	}
}

type event struct {
	name string // ":" for a comment
	data string
}

// eventStream reads the events of a GET /api/events.
type eventStream struct {
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

func openStream(t *testing.T, url string) *eventStream {
	t.Helper()
	// The timeout ends a test that waits for an event that never comes.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &eventStream{resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(s.close)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET %s: %s %v", url, resp.Status, resp.Header)
	}
	return s
}

func (s *eventStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event or comment, past the retry field.
func (s *eventStream) next(t *testing.T) event {
	t.Helper()
	var ev event
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (after %+v)", err, ev)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.name != "" {
				return ev
			}
		case strings.HasPrefix(line, ":"):
			return event{name: ":", data: strings.TrimSpace(line[1:])}
		case strings.HasPrefix(line, "event: "):
			ev.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data += line[len("data: "):]
		case strings.HasPrefix(line, "retry: "):
		default:
			t.Fatalf("a line of no event: %q", line)
		}
	}
}

// nextEvent returns the next event, skipping comments.
func (s *eventStream) nextEvent(t *testing.T) event {
	t.Helper()
	for {
		if ev := s.next(t); ev.name != ":" {
			return ev
		}
	}
}

func eventOf[T any](t *testing.T, ev event, name string) T {
	t.Helper()
	if ev.name != name {
		t.Fatalf("event %q (%.200s), want %q", ev.name, ev.data, name)
	}
	var v T
	if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
		t.Fatalf("event %s: %v: %s", name, err, ev.data)
	}
	return v
}

func TestEventsFirst(t *testing.T) {
	f := newFake()
	es := newEventServer(t, f, newClockwork().option())
	s := openStream(t, es.URL+"/api/events?topics=status,task-window,worker,logs,profile&window=5m&name="+w1+
		"&level=WARN&last=1m&worker="+w1)
	st := eventOf[Status](t, s.nextEvent(t), "status")
	tw := eventOf[TaskWindow](t, s.nextEvent(t), "task-window")
	wp := eventOf[WorkerPage](t, s.nextEvent(t), "worker")
	logs := eventOf[Logs](t, s.nextEvent(t), "logs")
	p := eventOf[Profile](t, s.nextEvent(t), "profile")
	if st.Scheduler.Address != "127.0.0.1:8786" || tw.Count == 0 || wp.Worker.Address != w1 || len(logs.Records) != 4 ||
		p.Root == nil {
		t.Errorf("first events: %+v\n%+v\n%+v\n%+v\n%+v", st, tw, wp, logs, p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.windows[0] != 5*time.Minute || f.logQueries[0].Level != "WARN" || len(f.profiles[0].Workers) != 1 {
		t.Errorf("parameters passed: %v %+v %+v", f.windows, f.logQueries, f.profiles)
	}
	// The same JSON as the endpoints.
	for _, c := range []struct{ name, method string }{{"status", "Snapshot"}, {"task-window", "TaskWindow"},
		{"worker", "Worker"}, {"logs", "Logs"}, {"profile", "Profile"}} {
		if f.calls[c.method] != 1 {
			t.Errorf("%s called %d times for the first event of %s", c.method, f.calls[c.method], c.name)
		}
	}
	if n := f.calls["Groups"] + f.calls["Bandwidth"] + f.calls["Workers"]; n != 0 {
		t.Errorf("%d calls for topics nobody watches", n)
	}
}

// TestEventsChanges checks that a topic is sent again when it changed,
// and only then.
func TestEventsChanges(t *testing.T) {
	f := newFake()
	cw := newClockwork()
	es := newEventServer(t, f, cw.option())
	s := openStream(t, es.URL+"/api/events?topics=status,workers")
	eventOf[Status](t, s.nextEvent(t), "status")
	ws := eventOf[Workers](t, s.nextEvent(t), "workers")

	f.bump("status")
	cw.tick(t)
	st := eventOf[Status](t, s.nextEvent(t), "status")
	if !st.Time.Equal(now(0).Add(time.Millisecond)) {
		t.Errorf("status after a change: time %v", st.Time)
	}
	if n := f.called("Workers"); n != 2 {
		t.Errorf("Workers called %d times after a refresh, want 2", n)
	}
	// Workers did not change: not sent. Had it been, its event would
	// come before this one, of the workers changed.
	f.bump("workers")
	cw.tick(t)
	ws2 := eventOf[Workers](t, s.nextEvent(t), "workers")
	if !ws2.Time.Equal(ws.Time.Add(time.Millisecond)) {
		t.Errorf("workers after a change: time %v, first %v", ws2.Time, ws.Time)
	}
	// Nothing changes: a refresh sends nothing, then everything changes.
	cw.tick(t)
	f.advance()
	cw.tick(t)
	// Both come, in the order the hub happened to refresh them.
	got := map[string]bool{}
	for range 2 {
		ev := s.nextEvent(t)
		got[ev.name] = true
		if ev.name == "status" && !eventOf[Status](t, ev, "status").Time.Equal(now(1).Add(time.Millisecond)) {
			t.Errorf("after an advance: %s %.100s", ev.name, ev.data)
		}
	}
	if !got["status"] || !got["workers"] {
		t.Errorf("after an advance: events %v, want status and workers", got)
	}
	if n := f.called("Snapshot"); n != 5 {
		t.Errorf("Snapshot called %d times: once first, once per refresh (4); want 5", n)
	}
}

// TestEventsShared checks that streams of the same topic and parameters
// share one call of the Source per refresh, and those of other
// parameters do not.
func TestEventsShared(t *testing.T) {
	f := newFake()
	cw := newClockwork()
	es := newEventServer(t, f, cw.option())
	var streams []*eventStream
	for range 3 {
		s := openStream(t, es.URL+"/api/events?topics=status,task-window&window=5m")
		eventOf[Status](t, s.nextEvent(t), "status")
		eventOf[TaskWindow](t, s.nextEvent(t), "task-window")
		streams = append(streams, s)
	}
	// The same parameters written otherwise: the same feed.
	other := openStream(t, es.URL+"/api/events?topics=task-window,status,status&window=300")
	eventOf[TaskWindow](t, other.nextEvent(t), "task-window") // in the order asked
	eventOf[Status](t, other.nextEvent(t), "status")
	streams = append(streams, other)
	// Another window: a feed of its own.
	one := openStream(t, es.URL+"/api/events?topics=task-window&window=1m")
	eventOf[TaskWindow](t, one.nextEvent(t), "task-window")
	if a, b := f.called("Snapshot"), f.called("TaskWindow"); a != 1 || b != 2 {
		t.Errorf("first events of 5 streams: Snapshot called %d times, TaskWindow %d; want 1 and 2", a, b)
	}
	f.advance()
	cw.tick(t)
	for _, s := range streams {
		// The order of the events of one refresh is free.
		a, b := s.nextEvent(t), s.nextEvent(t)
		if names := a.name + " " + b.name; names != "status task-window" && names != "task-window status" {
			t.Errorf("after a refresh: events %s", names)
		}
	}
	eventOf[TaskWindow](t, one.nextEvent(t), "task-window")
	if a, b := f.called("Snapshot"), f.called("TaskWindow"); a != 2 || b != 4 {
		t.Errorf("after a refresh of 5 streams: Snapshot called %d times, TaskWindow %d; want 2 and 4", a, b)
	}
}

// TestEventsHeavy checks that the topics that cost the most are
// refreshed less often.
func TestEventsHeavy(t *testing.T) {
	f := newFake()
	cw := newClockwork()
	es := newEventServer(t, f, cw.option())
	s := openStream(t, es.URL+"/api/events?topics=profile,groups,status")
	for _, name := range []string{"profile", "groups", "status"} {
		eventOf[json.RawMessage](t, s.nextEvent(t), name)
	}
	for i := range heavy {
		cw.tick(t)
		if i < heavy-1 && (f.called("Profile") != 1 || f.called("Groups") != 1) {
			t.Fatalf("after %d refreshes: Profile called %d times, Groups %d", i+1, f.called("Profile"), f.called("Groups"))
		}
	}
	if a, b, c := f.called("Profile"), f.called("Groups"), f.called("Snapshot"); a != 2 || b != 2 || c != 1+heavy {
		t.Errorf("after %d refreshes: Profile called %d times, Groups %d, Snapshot %d", heavy, a, b, c)
	}
}

func TestEventsErrors(t *testing.T) {
	f := newFake()
	f.profileErr = errProfile
	es := newEventServer(t, f, newClockwork().option())
	s := openStream(t, es.URL+"/api/events?topics=profile,worker&name=nobody:1")
	for _, want := range []string{errProfile.Error(), `no worker "nobody:1"`} {
		e := eventOf[struct{ Topic, Error string }](t, s.nextEvent(t), "topic-error")
		if !strings.Contains(e.Error, want) {
			t.Errorf("topic-error %+v, want %q", e, want)
		}
	}
}

// TestEventsEnd checks that a stream ends when its client goes, and that
// the handler stops refreshing when no stream is left.
func TestEventsEnd(t *testing.T) {
	f := newFake()
	cw := newClockwork()
	es := newEventServer(t, f, cw.option())
	a := openStream(t, es.URL+"/api/events?topics=status")
	b := openStream(t, es.URL+"/api/events?topics=status,workers")
	eventOf[Status](t, a.nextEvent(t), "status")
	eventOf[Status](t, b.nextEvent(t), "status")
	eventOf[Workers](t, b.nextEvent(t), "workers")
	b.close()
	es.waitEnded(t)
	es.h.hub.mu.Lock()
	feeds := len(es.h.hub.feeds)
	es.h.hub.mu.Unlock()
	if feeds != 1 {
		t.Errorf("%d feeds after a stream of two ended, want the one the other watches", feeds)
	}
	cw.tick(t)
	if n := f.called("Workers"); n != 1 {
		t.Errorf("Workers called %d times after its only stream ended", n)
	}
	a.close()
	es.waitEnded(t)
	es.h.hub.mu.Lock()
	feeds, running := len(es.h.hub.feeds), es.h.hub.stop != nil
	es.h.hub.mu.Unlock()
	if feeds != 0 || running {
		t.Errorf("no stream left: %d feeds, refreshing %v", feeds, running)
	}
	// A new stream starts the refreshes again.
	c := openStream(t, es.URL+"/api/events?topics=status")
	eventOf[Status](t, c.nextEvent(t), "status")
	f.advance()
	cw.tick(t)
	eventOf[Status](t, c.nextEvent(t), "status")
}

func TestEventsKeepAlive(t *testing.T) {
	es := newEventServer(t, newFake(), newClockwork().option(), func(c *config) { c.alive = time.Millisecond })
	s := openStream(t, es.URL+"/api/events?topics=system")
	eventOf[System](t, s.nextEvent(t), "system")
	if ev := s.next(t); ev.name != ":" || ev.data != "keep-alive" {
		t.Errorf("after the events, %+v; want a keep-alive comment", ev)
	}
}

func TestEventsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	es := newEventServer(t, newFake(), newClockwork().option(), WithContext(ctx))
	s := openStream(t, es.URL+"/api/events?topics=system")
	eventOf[System](t, s.nextEvent(t), "system")
	cancel()
	es.waitEnded(t)
}

// TestEventsRealTicker runs a stream on the real ticker, at a short
// interval: the refreshes come.
func TestEventsRealTicker(t *testing.T) {
	f := newFake()
	es := newEventServer(t, f, WithInterval(time.Millisecond))
	s := openStream(t, es.URL+"/api/events?topics=status")
	eventOf[Status](t, s.nextEvent(t), "status")
	f.advance()
	for {
		st := eventOf[Status](t, s.nextEvent(t), "status")
		if st.Time.Equal(now(1)) {
			break
		}
	}
}

// plainWriter is a ResponseWriter that cannot flush, as some middlewares'.
type plainWriter struct{ rec *httptest.ResponseRecorder }

func (p plainWriter) Header() http.Header         { return p.rec.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.rec.Write(b) }
func (p plainWriter) WriteHeader(code int)        { p.rec.WriteHeader(code) }

// TestEventsNoFlush checks that a stream that cannot be flushed sends
// its first events and ends, for the browser to ask again.
func TestEventsNoFlush(t *testing.T) {
	h := newHandler(newFake(), newClockwork().option())
	rec := httptest.NewRecorder()
	h.root.ServeHTTP(plainWriter{rec}, httptest.NewRequest("GET", "/api/events?topics=status,system", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "event: status\ndata: {") || !strings.Contains(body, "event: system\ndata: {") {
		t.Errorf("a stream that cannot flush: %d %.300q", rec.Code, body)
	}
	if len(h.hub.feeds) != 0 {
		t.Errorf("%d feeds left", len(h.hub.feeds))
	}
}
