package archive

import (
	"context"
	"log/slog"
	"os"

	"github.com/shoal-data/shoal/internal/logring"
)

// LogHandler returns a slog handler that queues the records of at least
// the writer's log level (WithLogLevel; Info by default) as rows of the
// logs table, from process (ProcessScheduler, ProcessWorker or
// ProcessLocal) and, for a worker, its address, and passes every record on
// to next, which may be nil. A record of another process that names a
// worker in its attribute "worker" has it in the column worker.
func (w *Writer) LogHandler(next slog.Handler, process, worker string) slog.Handler {
	return &logHandler{w: w, next: next, process: process, worker: worker, pid: int64(os.Getpid())}
}

type logHandler struct {
	w       *Writer
	next    slog.Handler
	process string
	worker  string
	pid     int64
	attrs   []slog.Attr // of WithAttrs, their keys with the groups before them
	group   string      // the groups of WithGroup, each followed by a dot
}

func (h *logHandler) keeps(l slog.Level) bool { return l >= h.w.cfg.level.Level() }

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.keeps(l) || (h.next != nil && h.next.Enabled(ctx, l))
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.keeps(r.Level) {
		attrs := make(map[string]string, len(h.attrs)+r.NumAttrs())
		for _, a := range h.attrs {
			logring.Flatten(attrs, "", a)
		}
		r.Attrs(func(a slog.Attr) bool {
			logring.Flatten(attrs, h.group, a)
			return true
		})
		l := NewLog(r.Time, r.Level, r.Message, attrs)
		l.Process, l.Worker, l.Pid = h.process, h.worker, h.pid
		if l.Worker == "" {
			l.Worker = attrs["worker"]
		}
		h.w.AddLogs(l)
	}
	if h.next != nil && h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = make([]slog.Attr, len(h.attrs), len(h.attrs)+len(as))
	copy(c.attrs, h.attrs)
	for _, a := range as {
		a.Key = h.group + a.Key
		c.attrs = append(c.attrs, a)
	}
	if h.next != nil {
		c.next = h.next.WithAttrs(as)
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = h.group + name + "."
	if h.next != nil {
		c.next = h.next.WithGroup(name)
	}
	return &c
}
