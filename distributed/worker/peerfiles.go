package worker

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/graph"
)

// peerFiles reads the shuffle files of other workers from them over Flight
// (graph.Env.Peers).
type peerFiles struct{ w *Worker }

func (p peerFiles) OpenPeer(ctx context.Context, worker, name string, offset, length int64) (io.ReadCloser, error) {
	if err := flightdata.CheckFileName(name); err != nil {
		return nil, err
	}
	conn, err := p.w.peers.Get(worker)
	if err != nil {
		return nil, &graph.WorkerLostError{Worker: worker, Err: err}
	}
	key, _ := graph.TaskKey(ctx)
	prefix := key.Prefix()
	start := time.Now()
	rc, err := flightdata.ReadFile(p.w.peerContext(ctx, prefix), flight.NewFlightServiceClient(conn),
		flightdata.FileRange{Name: name, Offset: offset, Length: length})
	if err != nil {
		return nil, peerError(ctx, worker, name, err)
	}
	rc = &peerReader{ReadCloser: rc, ctx: ctx, worker: worker, name: name}
	return &countingReader{ReadCloser: rc, wait: time.Since(start), done: func(n int64, d time.Duration) {
		w := p.w
		w.tel.netIn.Add(n)
		w.metrics.transfer.WithLabelValues("in").Add(float64(n))
		w.tel.transfer(worker, prefix, false, n, d)
		w.tel.inputs.readFile(key, worker, start, d, n)
		graph.AddMetric(ctx, diagnostics.ActivityTransferIn, diagnostics.UnitSeconds, d.Seconds())
		graph.AddMetric(ctx, diagnostics.ActivityTransferIn, diagnostics.UnitBytes, float64(n))
		graph.AddMetric(ctx, diagnostics.ActivityTransferIn, diagnostics.UnitCount, 1)
	}}, nil
}

// peerError says what reading a file from a peer gave: a
// *graph.WorkerLostError when the peer could not be reached or broke off,
// else what it answered.
func peerError(ctx context.Context, worker, name string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	switch status.Code(err) {
	case codes.NotFound, codes.OutOfRange, codes.InvalidArgument, codes.PermissionDenied:
		return fmt.Errorf("read %s from worker %s: %w", name, worker, err)
	}
	return &graph.WorkerLostError{Worker: worker, Err: fmt.Errorf("read %s: %w", name, err)}
}

// peerReader reads a peer's file; a peer that breaks off is lost.
type peerReader struct {
	io.ReadCloser
	ctx          context.Context
	worker, name string
}

func (r *peerReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = peerError(r.ctx, r.worker, r.name, err)
	}
	return n, err
}

// serveFile answers a peer's ActionReadFile from the scratch directory.
func (w *Worker) serveFile(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	start := time.Now()
	if err := flightdata.ServeReadFile(a, stream, w.env.LocalDir); err != nil {
		return err
	}
	var r flightdata.FileRange
	if flightdata.DecodeFileRange(a.Body, &r) == nil {
		peer, prefix := requester(stream.Context())
		w.served(peer, prefix, r.Length, time.Since(start))
	}
	return nil
}
