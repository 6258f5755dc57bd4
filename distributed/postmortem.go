package distributed

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// PerformanceReport runs fn and writes to the file path a performance
// report of what the cluster did meanwhile: one HTML file that opens
// offline (it loads nothing) and can be mailed. It shows the pages of
// the dashboard for the period: a summary (wall time, task runs, bytes
// computed, transferred and spilled, workers, and where in the program
// each computation was submitted), the task stream, the progress, the
// fine metrics of each prefix, the CPU profile as a flame graph, the
// workers' memory over time, the bandwidth between workers, the erred
// tasks with their errors, and the logs of the scheduler and the
// workers.
//
// Its size is bounded: the task stream shows up to 5,000 task runs one
// by one and beyond sums them in buckets of time (of the last hour of a
// longer period; the rest of the report covers all of it), the workers' pages
// show their last 500 runs and 1,000 log records, the logs page the
// last 10,000 records, the errors page the last 1,000 errors; the
// profile is that of the whole period, and of each of the 16 busiest
// prefixes and workers alone.
//
// The report is written whether fn fails or not; PerformanceReport
// returns fn's error, joined with the report's if it could not be
// written.
func (c *Client) PerformanceReport(ctx context.Context, path string, fn func(context.Context) error) error {
	fail := func(err error) error { return fmt.Errorf("performance report %s: %w", path, err) }
	stream, err := wire.NewSchedulerClient(c.conn).DumpReport(ctx)
	if err != nil {
		return fail(err)
	}
	defer stream.CloseSend()
	if err := stream.Send(&wire.DumpReportUp{}); err != nil {
		return fail(err)
	}
	if _, err := stream.Recv(); err != nil {
		return fail(err)
	}
	fnErr := fn(ctx)
	snap, err := c.reportSnapshot(stream)
	if err != nil {
		return errors.Join(fnErr, fail(err))
	}
	if fnErr != nil {
		snap.Report.Error = fnErr.Error()
	}
	return errors.Join(fnErr, dashboard.SaveReport(path, snap))
}

// reportSnapshot ends the period of a report and reads its snapshot.
func (c *Client) reportSnapshot(stream wire.Scheduler_DumpReportClient) (*dashboard.Snapshot, error) {
	if err := stream.Send(&wire.DumpReportUp{}); err != nil {
		return nil, err
	}
	rep, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(rep.Snapshot))
	if err != nil {
		return nil, fmt.Errorf("the scheduler's data: %w", err)
	}
	var snap dashboard.Snapshot
	if err := json.NewDecoder(zr).Decode(&snap); err != nil {
		return nil, fmt.Errorf("the scheduler's data: %w", err)
	}
	if snap.Report == nil {
		return nil, errors.New("the scheduler's data has no summary")
	}
	return &snap, nil
}

// DumpClusterState writes the state of the cluster to the file path, for
// a post-mortem once the cluster is gone: the scheduler's tasks, workers,
// transition log and log records; each worker's state machine (its
// tasks, values and fetches), transition log, handled events, log
// records, last reports of resources and fine metrics; and what the
// dashboard shows. The file is gzipped JSON in the format of package
// diagnostics/dump, which documents it; `shoal dump inspect FILE` reads
// it, and `shoal dashboard --dump FILE` serves the dashboard from it. A
// worker that does not answer within ten seconds is in the dump with the
// error, and what the scheduler kept of it.
func (c *Client) DumpClusterState(ctx context.Context, path string) error {
	rep, err := wire.NewSchedulerClient(c.conn).DumpState(ctx, &wire.DumpStateRequest{})
	if err != nil {
		return fmt.Errorf("dump the cluster of scheduler %s: %w", c.addr, err)
	}
	f, err := dump.Decode(bytes.NewReader(rep.Json))
	if err != nil {
		return fmt.Errorf("dump the cluster of scheduler %s: %w", c.addr, err)
	}
	return dump.Save(path, f)
}

// Story returns how tasks came to be where they are: the transitions of
// keys on the scheduler and on the workers (Worker set), oldest first.
// A transition to the scheduler's "erred" or a worker's "error" carries
// the task's error. The scheduler keeps the last 100,000 transitions
// (server.Config.LogSize), each worker its last 10,000; a worker that
// does not answer within ten seconds is left out.
func (c *Client) Story(ctx context.Context, keys ...graph.Key) ([]dump.Transition, error) {
	req := &wire.DumpStoryRequest{Keys: make([]string, len(keys))}
	for i, k := range keys {
		req.Keys[i] = string(k)
	}
	rep, err := wire.NewSchedulerClient(c.conn).DumpStory(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("story of %d keys from scheduler %s: %w", len(keys), c.addr, err)
	}
	return wire.DecodeTransitions(rep.Transitions), nil
}
