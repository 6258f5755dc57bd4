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

// The records a worker process writes as JSON come out of the cluster's
// logger as they went in: attributes in their order, whole numbers as
// integers (console logs printed memory_limit=3.145728e+08), groups as
// groups; a line that is not one JSON object is "worker output".
func TestForwardJSONRecords(t *testing.T) {
	tests := []struct {
		line string
		want string // the record as the text handler prints it, without time
	}{
		{`{"time":"2025-01-02T15:04:05Z","level":"INFO","msg":"worker started","memory_limit":314572800,"spill_above":188743680,"worker":"w1","threads":2}`,
			`level=INFO msg="worker started" memory_limit=314572800 spill_above=188743680 worker=w1 threads=2`},
		{`{"level":"WARN","msg":"slow","seconds":1.5,"big":12345678901234567890,"ok":true,"none":null,"g":{"b":1,"a":"x"},"list":[1,2]}`,
			`level=WARN msg=slow seconds=1.5 big=1.2345678901234567e+19 ok=true none=<nil> g.a=x g.b=1 list="[1 2]"`},
		{`{"level":"INFO","msg":"cut"`, `level=WARN msg="worker output" stream=stderr line="{\"level\":\"INFO\",\"msg\":\"cut\""`},
		{`[1,2]`, `level=WARN msg="worker output" stream=stderr line=[1,2]`},
	}
	for _, tt := range tests {
		var buf strings.Builder
		h := slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})
		forwardLogs(strings.NewReader(tt.line+"\n"), "stderr", slog.New(h), &tailBuffer{max: 10}, nil)
		if got := strings.TrimSpace(buf.String()); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.line, got, tt.want)
		}
	}
}
