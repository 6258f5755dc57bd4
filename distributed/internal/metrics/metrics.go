// Package metrics holds what the scheduler's and the workers' Prometheus
// metrics share: an HTTP server for /metrics (which the scheduler's
// dashboard uses too), the measure of goroutine latency, and the disk
// usage of a directory.
package metrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shoal-data/shoal/distributed/security"

	"github.com/shoal-data/shoal/diagnostics"
)

// Server is an HTTP server of a process's own: /metrics, or the
// scheduler's dashboard.
type Server struct {
	lis  net.Listener
	http *http.Server
	done chan struct{}
}

// Serve starts serving reg on addr (host:port; port 0 picks a free one).
func Serve(addr string, reg *prometheus.Registry, tlsCfg *tls.Config, logger *slog.Logger) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return ServeHTTP("metrics", addr, mux, tlsCfg, logger)
}

// ServeHTTP starts serving h on addr (host:port; port 0 picks a free
// one). Beyond loopback it serves HTTPS with tlsCfg when it is not nil,
// and otherwise plain HTTP with a warning in the log: what it serves (task
// errors with values of input files, metrics) is anyone's who reaches it.
// On loopback it serves plain HTTP, for a browser on the same machine.
// what names the server in errors and logs, such as "dashboard".
func ServeHTTP(what, addr string, h http.Handler, tlsCfg *tls.Config, logger *slog.Logger) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", what, addr, err)
	}
	switch {
	case security.IsLoopback(lis.Addr().String()):
	case tlsCfg != nil:
		lis = tls.NewListener(lis, tlsCfg)
	default:
		logger.Warn(what+" served over plain HTTP to the network: anyone who reaches "+lis.Addr().String()+
			" reads it (task errors, which may hold values of input files, and metrics); give the cluster "+
			"TLS certificates to serve it over HTTPS, or serve it on loopback", "address", lis.Addr().String())
	}
	// The server's own complaints (a client without a certificate...)
	// go to the logger, not to the standard error.
	errLog := slog.NewLogLogger(logger.With("server", what).Handler(), slog.LevelDebug)
	s := &Server{lis: lis, http: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog},
		done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(what+" server stopped", "error", err)
		}
	}()
	return s, nil
}

// Address returns the host:port served.
func (s *Server) Address() string { return s.lis.Addr().String() }

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	<-s.done
	return err
}

// Lateness measures goroutine scheduling latency: how late a timer's
// expiry is picked up, which grows when the process is overloaded.
type Lateness struct {
	hist prometheus.Histogram
	last atomic.Int64 // nanoseconds, the latest measure
	stop chan struct{}
	wg   sync.WaitGroup
}

// Last returns the latest measure.
func (l *Lateness) Last() time.Duration { return time.Duration(l.last.Load()) }

// NewLateness starts measuring every interval into a histogram named name,
// registered with reg.
func NewLateness(reg prometheus.Registerer, name, help string, interval time.Duration) *Lateness {
	l := &Lateness{hist: prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help,
		Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5}}), stop: make(chan struct{})}
	reg.MustRegister(l.hist)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTimer(interval)
		defer t.Stop()
		want := time.Now().Add(interval)
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				late := max(0, time.Since(want))
				l.hist.Observe(late.Seconds())
				l.last.Store(int64(late))
				want = time.Now().Add(interval)
				t.Reset(interval)
			}
		}
	}()
	return l
}

// Stop stops measuring.
func (l *Lateness) Stop() {
	close(l.stop)
	l.wg.Wait()
}

// Usage is the use of a directory.
type Usage struct {
	Used int64 // bytes of the files under it
	Free int64 // bytes free on its file system for unprivileged users
	Size int64 // bytes of its file system
	// Shuffles are the bytes under each of its subdirectories named
	// shuffle-ID (the shards of a shuffle), by ID.
	Shuffles map[string]int64
}

// Disk measures a directory.
func Disk(dir string) (Usage, error) {
	var u Usage
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		u.Used += fi.Size()
		if rel, err := filepath.Rel(dir, path); err == nil {
			top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			if id, ok := strings.CutPrefix(top, "shuffle-"); ok && top != rel {
				if u.Shuffles == nil {
					u.Shuffles = map[string]int64{}
				}
				u.Shuffles[id] += fi.Size()
			}
		}
		return nil
	})
	var st syscall.Statfs_t
	if serr := syscall.Statfs(dir, &st); serr == nil {
		u.Free = int64(st.Bavail) * int64(st.Bsize)
		u.Size = int64(st.Blocks) * int64(st.Bsize)
	} else if err == nil {
		err = serr
	}
	return u, err
}

// Fine is the Prometheus series of fine performance metrics, one counter
// per unit: <prefix>_fine_seconds_total, _bytes_total and _count_total,
// labelled with the task prefix and the activity.
type Fine [3]*prometheus.Desc

// fineUnits are the units of Fine's series, in order.
var fineUnits = [3]string{diagnostics.UnitSeconds, diagnostics.UnitBytes, diagnostics.UnitCount}

// NewFine describes the fine metrics series of a process; whose says
// whose activities they count, such as "all workers".
func NewFine(prefix, whose string) Fine {
	labels := []string{"prefix", "activity"}
	return Fine{
		prometheus.NewDesc(prefix+"_fine_seconds_total", "Fine performance metrics of "+whose+
			": seconds spent on each activity (compute, cpu, queued, waiting, transfer-in, spill-write, disk-write, encode, idle, ...), by task prefix.",
			labels, nil),
		prometheus.NewDesc(prefix+"_fine_bytes_total", "Fine performance metrics of "+whose+
			": bytes moved by each activity (transfer-in, transfer-out, spill-write, spill-read, disk-write, disk-read), by task prefix.",
			labels, nil),
		prometheus.NewDesc(prefix+"_fine_count_total", "Fine performance metrics of "+whose+
			": how many times each activity happened (transfers, spills), by task prefix.", labels, nil),
	}
}

// Describe sends the series' descriptions.
func (f Fine) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range f {
		ch <- d
	}
}

// Collect sends ms as the series.
func (f Fine) Collect(ch chan<- prometheus.Metric, ms []diagnostics.FineMetric) {
	for _, m := range ms {
		for i, u := range fineUnits {
			if m.Unit == u {
				ch <- prometheus.MustNewConstMetric(f[i], prometheus.CounterValue, m.Value, m.Prefix, m.Activity)
			}
		}
	}
}
