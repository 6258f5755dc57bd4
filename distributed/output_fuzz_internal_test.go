package distributed

import (
	"bytes"
	"log/slog"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/distributed/wire"
)

// FuzzWorkerOutput reads arbitrary bytes as what a worker process writes
// to its standard error or output, as its nanny and a local cluster read
// it: every line becomes records that cross the wire to the scheduler
// (the nanny of shoal worker --nanny sends them in a WorkerExit), so
// each must marshal, whatever the process wrote.
func FuzzWorkerOutput(f *testing.F) {
	f.Add([]byte(`{"time":"2025-01-02T15:04:05Z","level":"INFO","msg":"worker started","n":3}`+"\nprinted\n"), true)
	f.Add([]byte("panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n"), true)
	f.Add([]byte(`{"level":"WARN","msg":"cut"`), false)
	f.Fuzz(func(t *testing.T, out []byte, stderr bool) {
		stream := "stdout"
		if stderr {
			stream = "stderr"
		}
		var recs []*wire.LogRecord
		tail := &tailBuffer{max: tailLines}
		forwardLogs(bytes.NewReader(out), stream, slog.New(slog.DiscardHandler), tail,
			func(r *wire.LogRecord) { recs = append(recs, r) })
		for name, logs := range map[string][]*wire.LogRecord{"output": recs, "last lines": parseLogLines(tail.last(tailLines))} {
			if _, err := proto.Marshal(&wire.WorkerExit{Pid: 1, Logs: logs}); err != nil {
				t.Fatalf("the %s of the worker do not cross the wire: %v", name, err)
			}
		}
	})
}
