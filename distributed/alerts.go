package distributed

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/wire"
)

// Alerts returns the alerts the scheduler raised and has not resolved,
// oldest first, and the last ones it resolved: a worker's disk nearly
// full or too small for a running shuffle, a worker's memory near its
// limit, a silent or slow worker, a straggler task, a skewed shuffle
// partition, heavy spilling (see package diagnostics/alert). Each names
// the worker and what to do. They come as AlertRaised and AlertResolved
// events too.
func (c *Client) Alerts(ctx context.Context) (active, recent []diagnostics.Alert, err error) {
	rep, err := wire.NewSchedulerClient(c.conn).Alerts(ctx, &wire.InfoRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("alerts: %w", err)
	}
	for _, a := range rep.Active {
		active = append(active, wire.DecodeAlert(a))
	}
	for _, a := range rep.Recent {
		recent = append(recent, wire.DecodeAlert(a))
	}
	return active, recent, nil
}

var _ diagnostics.AlertSource = (*Client)(nil)
