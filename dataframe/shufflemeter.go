package dataframe

import (
	"context"
	"io"
	"time"

	"github.com/shoal-data/shoal/dataframe/internal/shuffle"
	"github.com/shoal-data/shoal/graph"
)

// meteredStorage counts what a task writes to and reads from its shuffle
// files in the task's fine performance metrics: bytes and the time spent
// in the file system, as "disk-write" and "disk-read" (graph.AddMetric).
type meteredStorage struct{ shuffle.Storage }

func (s meteredStorage) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	start := time.Now()
	w, err := s.Storage.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &meteredWriter{WriteCloser: w, ctx: ctx, wait: time.Since(start)}, nil
}

func (s meteredStorage) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	start := time.Now()
	r, err := s.Storage.Open(ctx, name, offset, length)
	if err != nil {
		return nil, err
	}
	return &meteredReader{ReadCloser: r, ctx: ctx, wait: time.Since(start)}, nil
}

type meteredWriter struct {
	io.WriteCloser
	ctx  context.Context
	n    int64
	wait time.Duration
	done bool
}

func (w *meteredWriter) Write(p []byte) (int, error) {
	start := time.Now()
	n, err := w.WriteCloser.Write(p)
	w.wait += time.Since(start)
	w.n += int64(n)
	return n, err
}

func (w *meteredWriter) Close() error {
	start := time.Now()
	err := w.WriteCloser.Close()
	if !w.done {
		w.done = true
		w.wait += time.Since(start)
		graph.AddMetric(w.ctx, "disk-write", "bytes", float64(w.n))
		graph.AddMetric(w.ctx, "disk-write", "seconds", w.wait.Seconds())
	}
	return err
}

type meteredReader struct {
	io.ReadCloser
	ctx  context.Context
	n    int64
	wait time.Duration
	done bool
}

func (r *meteredReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := r.ReadCloser.Read(p)
	r.wait += time.Since(start)
	r.n += int64(n)
	return n, err
}

func (r *meteredReader) Close() error {
	err := r.ReadCloser.Close()
	if !r.done {
		r.done = true
		graph.AddMetric(r.ctx, "disk-read", "bytes", float64(r.n))
		graph.AddMetric(r.ctx, "disk-read", "seconds", r.wait.Seconds())
	}
	return err
}
