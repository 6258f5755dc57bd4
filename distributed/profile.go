package distributed

import (
	"context"
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed/wire"
)

// Profile returns the CPU profile of the cluster's tasks in the windows
// and samples opts selects: one profile, merged on the scheduler from the
// windows every worker sampled (5 seconds each by default), that go tool
// pprof opens (write it with its Write method). The scheduler first asks
// every worker to cut its current window, so the samples until the call
// are in. Each sample carries the labels of its task, prefix, key and
// computation, and of its worker; select with them in pprof
// (-tagfocus prefix=read-csv) or in opts.
func (c *Client) Profile(ctx context.Context, opts diagnostics.ProfileOptions) (*profile.Profile, error) {
	req := &wire.ProfileRequest{Prefixes: opts.Prefixes, Workers: opts.Workers}
	if !opts.Start.IsZero() {
		req.StartUnixNano = opts.Start.UnixNano()
	}
	if !opts.Stop.IsZero() {
		req.StopUnixNano = opts.Stop.UnixNano()
	}
	rep, err := wire.NewSchedulerClient(c.conn).Profile(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	p, err := profile.ParseData(rep.Profile)
	if err != nil {
		return nil, fmt.Errorf("profile: the scheduler's answer: %w", err)
	}
	return p, nil
}

// FineMetrics returns where the time of the cluster's tasks went, per
// worker, task prefix and activity (see diagnostics.Activities): their
// compute and CPU time, time queued for a thread and waiting for inputs,
// transfers, spills, encoding and decoding, what the tasks reported
// themselves (graph.AddMetric), and the workers' idle threads; totals
// since the scheduler started, as of the workers' last heartbeats.
// diagnostics.SumFineMetrics adds them up over workers.
func (c *Client) FineMetrics(ctx context.Context) ([]diagnostics.FineMetric, error) {
	rep, err := wire.NewSchedulerClient(c.conn).FineMetrics(ctx, &wire.InfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("fine metrics: %w", err)
	}
	out := make([]diagnostics.FineMetric, len(rep.Metrics))
	for i, m := range rep.Metrics {
		out[i] = diagnostics.FineMetric{Worker: m.Worker, Prefix: m.Prefix, Activity: m.Activity, Unit: m.Unit,
			Value: m.Value}
	}
	return out, nil
}

var (
	_ diagnostics.ProfileSource     = (*Client)(nil)
	_ diagnostics.FineMetricsSource = (*Client)(nil)
)
