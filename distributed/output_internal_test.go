package distributed

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/distributed/wire"
)

// TestForwardLogsKeepsEverything reads a worker process's output: its log
// records, a line of what a task printed longer than a record, and what
// comes after it; every byte of the output lines reaches the output.
func TestForwardLogsKeepsEverything(t *testing.T) {
	long := strings.Repeat("x", 3*maxLine+10)
	in := `{"time":"2025-01-02T15:04:05Z","level":"INFO","msg":"worker started"}` + "\n" +
		"printed before\n" + long + "\nprinted after\nno newline at the end"
	var recs []*wire.LogRecord
	tail := &tailBuffer{max: 100}
	forwardLogs(strings.NewReader(in), "stderr", slog.New(slog.DiscardHandler), tail,
		func(r *wire.LogRecord) { recs = append(recs, r) })
	var got []string
	for _, r := range recs {
		if r.Attrs["stream"] != "stderr" {
			t.Errorf("record %v without its stream", r)
		}
		got = append(got, r.Message)
	}
	if len(got) < 6 || got[0] != "printed before" || strings.Join(got[1:len(got)-2], "") != long ||
		got[len(got)-2] != "printed after" || got[len(got)-1] != "no newline at the end" {
		t.Errorf("%d records of output; want the lines before and after, the long one in pieces", len(got))
	}
	if n := len(tail.last(100)); n != len(got)+1 {
		t.Errorf("%d lines kept, want %d (the log record too)", n, len(got)+1)
	}
}
