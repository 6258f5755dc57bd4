package archive

import (
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
	pid := int64(os.Getpid())
	return logring.Tee(next, w.cfg.level, func(r logring.Record) {
		l := NewLog(r.Time, r.Level, r.Message, r.Attrs)
		l.Process, l.Worker, l.Pid = process, worker, pid
		if l.Worker == "" {
			l.Worker = r.Attrs["worker"]
		}
		w.AddLogs(l)
	})
}
