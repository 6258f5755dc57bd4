package archive

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
)

// Defaults of a Writer.
const (
	// DefaultMaxBytes bounds the total size of an archive's files: 1 GiB.
	DefaultMaxBytes = 1 << 30
	// DefaultFlushInterval is the longest a row waits in memory before it
	// is in a file: what a crash of the process loses at most.
	DefaultFlushInterval = 10 * time.Second
	// DefaultMaxRows is the number of rows of a table that makes a file at
	// once, before the flush interval is over.
	DefaultMaxRows = 100_000
	// DefaultSampleInterval is how often the sampler is called.
	DefaultSampleInterval = 5 * time.Second
)

// timeLayout is the fixed-width UTC time that begins a file's name, so that
// names sort oldest first.
const timeLayout = "20060102T150405.000000000Z"

// staleTemp is the age beyond which a temporary file is the remains of a
// writer that died while writing it.
const staleTemp = time.Minute

// rescanEvery is how often the writer lists the archive's files again, to
// count those other writers of the same directory added.
const rescanEvery = time.Minute

// Option configures a Writer.
type Option func(*config)

type config struct {
	maxBytes       int64
	interval       time.Duration
	maxRows        int
	cluster        string
	logger         *slog.Logger
	level          slog.Leveler
	sampler        func(time.Time) []Sample
	sampleInterval time.Duration
}

// WithMaxBytes bounds the total size of the archive's files (default
// DefaultMaxBytes, 1 GiB): when a new file takes it beyond, the oldest
// files, of any table, are removed until it is within. Negative: no bound.
func WithMaxBytes(n int64) Option {
	return func(c *config) {
		if n != 0 {
			c.maxBytes = n
		}
	}
}

// WithFlushInterval sets how long a row may wait in memory before it is
// written (default DefaultFlushInterval, 10s): a crash loses at most the
// rows of this last interval. Each interval makes a file per table that
// received rows.
func WithFlushInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.interval = d
		}
	}
}

// WithMaxRows sets how many rows of a table make a file without waiting
// for the flush interval (default DefaultMaxRows). It bounds the memory the
// rows take while they wait: a table holds at most four times as many,
// while its files cannot be written as fast as rows come; more are
// dropped (see Dropped), and the loss is logged.
func WithMaxRows(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxRows = n
		}
	}
}

// WithCluster sets the value of the column cluster of every row, and the
// middle of the files' names: the scheduler's identity, for example. By
// default it is random.
func WithCluster(id string) Option {
	return func(c *config) { c.cluster = id }
}

// WithLogger sets where the writer logs the files it cannot write or
// remove; by default nowhere.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithLogLevel sets the least level of the records that the handlers of
// LogHandler keep (default slog.LevelInfo).
func WithLogLevel(l slog.Leveler) Option {
	return func(c *config) {
		if l != nil {
			c.level = l
		}
	}
}

// WithSampler has the writer call sample every sample interval
// (WithSampleInterval), from a goroutine of its own, and write the samples
// it returns to the metrics table.
func WithSampler(sample func(now time.Time) []Sample) Option {
	return func(c *config) { c.sampler = sample }
}

// WithSampleInterval sets how often the sampler is called (default
// DefaultSampleInterval, 5s).
func WithSampleInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.sampleInterval = d
		}
	}
}

// Writer writes telemetry to an archive directory, one subdirectory per
// table (see Tables). AddLogs, AddEvents, Record and the handlers of
// LogHandler only queue rows in memory and return at once; a goroutine of
// the Writer writes them to files. Its methods are safe for concurrent
// use.
type Writer struct {
	dir    string
	cfg    config
	logger *slog.Logger
	tag    string // the middle of the files' names

	mu          sync.Mutex
	pol         *policy
	logs        *rows[Log]
	events      *rows[Event]
	tasks       *rows[Task]
	transitions *rows[Transition]
	samples     *rows[Sample]
	bufs        []buffer // the same, by table
	subs        []*diagnostics.Subscription
	detached    bool // Close has taken subs: Attach subscribes no more
	closed      bool // rows added are dropped

	dropped  atomic.Uint64
	overflow atomic.Uint64 // rows dropped for want of room, not logged yet
	wake     chan struct{} // buffered(1): rows to look at
	flushReq chan chan error
	quit     chan struct{}
	done     chan struct{} // closed when the goroutines have stopped
	once     sync.Once
	closeErr error // of the last write, once done is closed

	// Used by the writing goroutine only.
	seq      uint64
	failedAt time.Time // when a failure was last logged
	failures int       // since then
}

// Open starts a Writer of the archive in dir, creating the directory and
// its tables' subdirectories if needed. Files already there count toward
// the size bound; temporary files left by a writer that died are removed.
// Close stops it.
func Open(dir string, opts ...Option) (*Writer, error) {
	cfg := config{maxBytes: DefaultMaxBytes, interval: DefaultFlushInterval, maxRows: DefaultMaxRows,
		level: slog.LevelInfo, sampleInterval: DefaultSampleInterval}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.cluster == "" {
		var b [6]byte
		rand.Read(b[:])
		cfg.cluster = "archive-" + hex.EncodeToString(b[:])
	}
	for _, t := range Tables {
		if err := os.MkdirAll(filepath.Join(dir, t), 0o700); err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
	}
	w := &Writer{
		dir:         dir,
		cfg:         cfg,
		logger:      cfg.logger,
		tag:         fileTag(cfg.cluster),
		pol:         newPolicy(cfg.interval, cfg.maxRows, cfg.maxBytes),
		logs:        &rows[Log]{},
		events:      &rows[Event]{},
		tasks:       &rows[Task]{},
		transitions: &rows[Transition]{},
		samples:     &rows[Sample]{},
		wake:        make(chan struct{}, 1),
		flushReq:    make(chan chan error),
		quit:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	w.bufs = []buffer{w.logs, w.events, w.tasks, w.transitions, w.samples} // in the order of Tables
	if w.logger == nil {
		w.logger = diagnostics.DiscardLogger()
	}
	w.scan()
	var wg sync.WaitGroup
	wg.Go(w.run)
	if cfg.sampler != nil {
		wg.Go(w.sample)
	}
	go func() {
		wg.Wait()
		close(w.done)
	}()
	return w, nil
}

// fileTag makes a cluster's identity fit in a file name.
func fileTag(cluster string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, cluster)
}

// Dir returns the archive's directory.
func (w *Writer) Dir() string { return w.dir }

// Cluster returns the value of the rows' column cluster.
func (w *Writer) Cluster() string { return w.cfg.cluster }

// Dropped returns how many rows were lost: added after Close, beyond what
// the Writer holds while it cannot keep up, or in files it could not write.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// AddLogs queues rows for the logs table.
func (w *Writer) AddLogs(rs ...Log) { addRows(w, logsTable, w.logs, rs) }

// AddEvents queues rows for the events table.
func (w *Writer) AddEvents(rs ...Event) { addRows(w, eventsTable, w.events, rs) }

// addRows queues rows for table t, whose buffer is b.
func addRows[T any, P rowPtr[T]](w *Writer, t int, b *rows[T], rs []T) {
	if len(rs) == 0 {
		return
	}
	now := time.Now()
	n := 0
	w.mu.Lock()
	for _, r := range rs {
		if queue[T, P](w, b, r) {
			n++
		}
	}
	wake := w.queued(t, n, now)
	w.mu.Unlock()
	if wake {
		w.signal()
	}
}

// queue adds a row to the buffer b, stamped with the cluster, unless the
// Writer is closed or b holds what it may: while the files cannot be
// written as fast as rows come, the rows beyond a few files' worth are
// lost rather than the memory. It reports whether it added the row.
// Called with w.mu held.
func queue[T any, P rowPtr[T]](w *Writer, b *rows[T], r T) bool {
	if w.closed || b.n >= 4*w.cfg.maxRows {
		w.dropped.Add(1)
		if !w.closed {
			w.overflow.Add(1)
		}
		return false
	}
	b.push(r)
	P(&b.cur[len(b.cur)-1]).stamp(w.cfg.cluster)
	return true
}

// queued tells the policy that n rows were queued for table t, and
// reports whether the writing goroutine must look at the tables again.
// Called with w.mu held.
func (w *Writer) queued(t, n int, now time.Time) bool {
	if n == 0 {
		return false
	}
	first := w.pol.pending[t].rows == 0
	full := w.pol.add(t, n, now)
	return first || full
}

// signal wakes the writing goroutine.
func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Flush writes every row queued before the call to files, with the events
// published before the call to the hubs of Attach, and returns the errors
// of the files it could not write.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	subs := w.subs
	w.mu.Unlock()
	for _, s := range subs {
		s.Flush()
	}
	ch := make(chan error, 1)
	select {
	case w.flushReq <- ch:
	case <-w.done:
		return fmt.Errorf("archive: flush %s: the writer is closed", w.dir)
	case <-ctx.Done():
		return fmt.Errorf("archive: flush %s: %w", w.dir, ctx.Err())
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("archive: flush %s: %w", w.dir, ctx.Err())
	}
}

// Close stops the subscriptions of Attach (after recording what they had
// queued) and the sampler, writes the rows queued, and stops the Writer.
// Rows added later are dropped. It returns the errors of the last files it
// could not write. Close is idempotent.
func (w *Writer) Close() error {
	w.once.Do(func() {
		w.mu.Lock()
		subs := w.subs
		w.subs, w.detached = nil, true
		w.mu.Unlock()
		for _, s := range subs {
			s.Close()
		}
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.quit)
		<-w.done
	})
	return w.closeErr
}

// run writes the tables' rows as they fall due, until Close.
func (w *Writer) run() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	rescan := time.NewTicker(rescanEvery)
	defer rescan.Stop()
	for {
		w.mu.Lock()
		at, ok := w.pol.wake()
		w.mu.Unlock()
		if ok {
			timer.Reset(time.Until(at))
		} else {
			timer.Stop()
		}
		select {
		case <-w.wake:
		case <-timer.C:
		case <-rescan.C:
			w.scan()
		case ch := <-w.flushReq:
			ch <- w.write(true)
			continue
		case <-w.quit:
			w.closeErr = w.write(true)
			return
		}
		w.write(false)
	}
}

// write writes the tables that are due (every table with rows, when all),
// then removes the files beyond the bound.
func (w *Writer) write(all bool) error {
	now := time.Now()
	type job struct {
		table int
		since time.Time
		rows  int
		write func(io.Writer) error
	}
	if n := w.overflow.Swap(0); n > 0 {
		w.failed("rows lost: they came faster than the archive could write them", "rows", n)
	}
	var jobs []job
	w.mu.Lock()
	for _, t := range w.pol.due(now, all) {
		jobs = append(jobs, job{table: t, since: w.pol.pending[t].since, rows: w.bufs[t].len(), write: w.bufs[t].take()})
		w.pol.taken(t)
	}
	w.mu.Unlock()
	var errs []error
	for _, j := range jobs {
		w.seq++
		name := fmt.Sprintf("%s-%s-%06d.parquet", j.since.UTC().Format(timeLayout), w.tag, w.seq)
		path := filepath.Join(w.dir, Tables[j.table], name)
		size, err := writeFile(path, j.write)
		if err != nil {
			w.dropped.Add(uint64(j.rows))
			w.failed("cannot write an archive file; its rows are lost", "path", path, "rows", j.rows, "error", err)
			errs = append(errs, fmt.Errorf("archive: write %s: %w", path, err))
			continue
		}
		w.mu.Lock()
		old := w.pol.stored(file{table: j.table, name: name, size: size})
		w.mu.Unlock()
		w.remove(old)
	}
	return errors.Join(errs...)
}

// writeFile writes a file under a temporary name beside path, and renames
// it to path once it is complete, so that every file of the archive can be
// read whenever the process stops. It returns the file's size.
func writeFile(path string, write func(io.Writer) error) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: bufio.NewWriterSize(f, 1<<16)}
	err = write(cw)
	if err == nil {
		err = cw.w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return cw.n, nil
}

type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// failed logs a failure, at most once a minute (the rest are counted).
func (w *Writer) failed(msg string, args ...any) {
	w.failures++
	if now := time.Now(); now.Sub(w.failedAt) >= time.Minute {
		w.logger.Warn("archive: "+msg, append(args, "failures", w.failures)...)
		w.failedAt, w.failures = now, 0
	}
}

// remove removes files of the archive.
func (w *Writer) remove(fs []file) {
	for _, f := range fs {
		path := filepath.Join(w.dir, Tables[f.table], f.name)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			w.failed("cannot remove an old archive file", "path", path, "error", err)
		}
	}
}

// scan lists the archive's files, removes temporary files that writers
// left when they died, and removes the oldest files beyond the bound.
func (w *Writer) scan() {
	var found []file
	now := time.Now()
	for t, table := range Tables {
		d := filepath.Join(w.dir, table)
		entries, err := os.ReadDir(d)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.failed("cannot list an archive directory", "path", d, "error", err)
			}
			continue
		}
		for _, e := range entries {
			name := e.Name()
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			switch {
			case isArchiveFile(name):
				found = append(found, file{table: t, name: name, size: info.Size()})
			case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".parquet.tmp") &&
				now.Sub(info.ModTime()) > staleTemp:
				os.Remove(filepath.Join(d, name))
			}
		}
	}
	w.mu.Lock()
	old := w.pol.found(found)
	w.mu.Unlock()
	w.remove(old)
}

// isArchiveFile reports whether name is that of a file a Writer made.
func isArchiveFile(name string) bool {
	if !strings.HasSuffix(name, ".parquet") || len(name) < len(timeLayout)+1 || name[len(timeLayout)] != '-' {
		return false
	}
	_, err := time.Parse(timeLayout, name[:len(timeLayout)])
	return err == nil
}

// sample calls the sampler every interval until Close.
func (w *Writer) sample() {
	t := time.NewTicker(w.cfg.sampleInterval)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			addRows(w, metricsTable, w.samples, w.cfg.sampler(now))
		case <-w.quit:
			return
		}
	}
}
