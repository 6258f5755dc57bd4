package distributed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/worker"
	"github.com/shoal-data/shoal/graph"
)

// Scatter sends values to the workers over Arrow Flight, spread among them
// (or among those of the Workers option), and returns their futures: later
// graphs use them where they are, as external keys (Future.Delayed), and
// Gather fetches them back. A scattered value lives only on the worker it
// was sent to: when that worker dies, the value is lost and the tasks that
// need it fail saying so.
func (c *Client) Scatter(ctx context.Context, values []any, opts ...TaskOption) ([]*Future, error) {
	var a graph.Annotations
	for _, o := range opts {
		o(&a)
	}
	addrs, err := c.resolveWorkers(ctx, a.Workers)
	if err != nil {
		return nil, fmt.Errorf("scatter: %w", err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("scatter: the cluster has no workers")
	}
	var id [8]byte
	rand.Read(id[:])
	prefix := "scatter-" + hex.EncodeToString(id[:])
	g := graph.New()
	keys := make([]graph.Key, len(values))
	for i, v := range values {
		addr := addrs[i%len(addrs)]
		k := graph.Key(fmt.Sprintf("%s-%d", prefix, i))
		conn, err := c.peers.Get(addr)
		if err != nil {
			return nil, fmt.Errorf("scatter value %d to worker %s: %w", i, addr, err)
		}
		if err := flightdata.Put(ctx, flight.NewFlightServiceClient(conn), string(k), v, c.cfg.registry); err != nil {
			return nil, fmt.Errorf("scatter value %d (%T) to worker %s: %w", i, v, addr, err)
		}
		t := &graph.Task{Key: k, Op: worker.ScatteredOp}
		t.Annotations = a
		t.Workers, t.LooseRestrictions = []string{addr}, true
		t.Retries = 0
		if err := g.Add(t); err != nil {
			return nil, err
		}
		keys[i] = k
	}
	comp, err := c.submit(ctx, g, keys, false)
	if err != nil {
		return nil, fmt.Errorf("scatter: %w", err)
	}
	return comp.futures, nil
}
