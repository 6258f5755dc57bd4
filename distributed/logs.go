package distributed

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/shoal-data/shoal/distributed/wire"
)

// LogRecord is a log record kept by the scheduler or sent by a worker.
type LogRecord struct {
	Time    time.Time
	Level   slog.Level
	Message string
	Attrs   map[string]string // worker, key, op, reason, error, ...
}

func (r LogRecord) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.Time.Format(time.RFC3339Nano), r.Level, r.Message)
	keys := make([]string, 0, len(r.Attrs))
	for k := range r.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, r.Attrs[k])
	}
	return b.String()
}

// WorkerLog is the last log records of one worker.
type WorkerLog struct {
	Records []LogRecord
	Gone    bool // the worker left or died; these were its last records
}

func fromWire(rs []*wire.LogRecord) []LogRecord {
	out := make([]LogRecord, len(rs))
	for i, r := range rs {
		out[i] = LogRecord{Time: time.Unix(0, r.TimeUnixNano), Level: slog.Level(r.Level), Message: r.Message,
			Attrs: r.Attrs}
	}
	return out
}

// SchedulerLogs returns the scheduler's last n log records (every record
// it keeps, 10,000 by default, when n <= 0), oldest first.
func (c *Client) SchedulerLogs(ctx context.Context, n int) ([]LogRecord, error) {
	rep, err := wire.NewSchedulerClient(c.conn).Logs(ctx, &wire.LogsRequest{N: int32(n)})
	if err != nil {
		return nil, fmt.Errorf("scheduler logs: %w", err)
	}
	return fromWire(rep.Scheduler), nil
}

// WorkerLogs returns the last n log records (all kept when n <= 0) of the
// named workers (addresses or names), or of every worker, by worker
// address. Workers send their records to the scheduler as they log them,
// so the last records of a worker that died are there too (Gone).
func (c *Client) WorkerLogs(ctx context.Context, n int, workers ...string) (map[string]WorkerLog, error) {
	rep, err := wire.NewSchedulerClient(c.conn).Logs(ctx, &wire.LogsRequest{N: int32(n), Workers: true,
		Names: workers})
	if err != nil {
		return nil, fmt.Errorf("worker logs: %w", err)
	}
	out := make(map[string]WorkerLog, len(rep.Workers))
	for a, l := range rep.Workers {
		out[a] = WorkerLog{Records: fromWire(l.Records), Gone: l.Gone}
	}
	return out, nil
}

// TopicEvent is an event recorded with LogEvent.
type TopicEvent struct {
	Time    time.Time
	Topic   string
	Message string
	Client  string // the id of the client that logged it
}

// LogEvent records msg under topic on the scheduler, for every client to
// read with TopicEvents (Dask's log_event).
func (c *Client) LogEvent(ctx context.Context, topic, msg string) error {
	_, err := wire.NewSchedulerClient(c.conn).LogEvent(ctx, &wire.TopicEvent{Topic: topic, Message: msg,
		TimeUnixNano: time.Now().UnixNano(), Client: c.id})
	if err != nil {
		return fmt.Errorf("log event on %q: %w", topic, err)
	}
	return nil
}

// TopicEvents returns the events recorded under topic, oldest first
// (Dask's get_events). Events, by contrast, streams the scheduler's task
// transitions, as the in-process executor's Events does.
func (c *Client) TopicEvents(ctx context.Context, topic string) ([]TopicEvent, error) {
	rep, err := wire.NewSchedulerClient(c.conn).Events(ctx, &wire.EventsRequest{Topic: topic})
	if err != nil {
		return nil, fmt.Errorf("events of %q: %w", topic, err)
	}
	out := make([]TopicEvent, len(rep.Events))
	for i, e := range rep.Events {
		out[i] = TopicEvent{Time: time.Unix(0, e.TimeUnixNano), Topic: e.Topic, Message: e.Message, Client: e.Client}
	}
	return out, nil
}
