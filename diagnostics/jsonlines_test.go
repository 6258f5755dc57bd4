package diagnostics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzReadJSONLines reads arbitrary bytes as a file of events: an error
// naming the line at fault, or events that write again to lines that
// read back the same.
func FuzzReadJSONLines(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, sampleEvents()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte("\n\n{\"kind\":\"spill\"}\r\n  \n"))
	f.Add([]byte(`{"kind":"no-such-kind"}`))
	f.Add([]byte(`{"time":"2025-06-01T12:00:00Z","alert":{"name":"disk-full"},"metrics":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := ReadJSONLines(bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), "line ") {
				t.Errorf("the error names no line: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteJSONLines(&out, events); err != nil {
			t.Fatalf("events read do not write again: %v", err)
		}
		back, err := ReadJSONLines(&out)
		if err != nil {
			t.Fatalf("events written do not read back: %v\n%s", err, out.Bytes())
		}
		a, _ := json.Marshal(events)
		b, _ := json.Marshal(back)
		if !bytes.Equal(a, b) {
			t.Errorf("written and read back, the events changed:\n%s\n%s", a, b)
		}
	})
}
