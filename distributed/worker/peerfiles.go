package worker

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/shoal-data/shoal/distributed/internal/flightdata"
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
		return nil, fmt.Errorf("worker %s: reach %s: %w", p.w.addr, worker, err)
	}
	rc, err := flightdata.ReadFile(ctx, flight.NewFlightServiceClient(conn), flightdata.FileRange{Name: name, Offset: offset, Length: length})
	if err != nil {
		return nil, fmt.Errorf("read %s from worker %s: %w", name, worker, err)
	}
	p.w.metrics.transfer.WithLabelValues("in").Add(float64(length))
	return rc, nil
}

// serveFile answers a peer's ActionReadFile from the scratch directory.
func (w *Worker) serveFile(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	if err := flightdata.ServeReadFile(a, stream, w.env.LocalDir); err != nil {
		return err
	}
	var r flightdata.FileRange
	if flightdata.DecodeFileRange(a.Body, &r) == nil {
		w.metrics.transfer.WithLabelValues("out").Add(float64(r.Length))
	}
	return nil
}
