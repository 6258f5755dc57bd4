package diagnostics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// WriteJSONLines writes events to w as JSON lines: one JSON object per
// event and line, with the field names of Event's JSON tags. ReadJSONLines
// reads them back.
func WriteJSONLines(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			return fmt.Errorf("diagnostics: write event %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("diagnostics: write events: %w", err)
	}
	return nil
}

// ReadJSONLines reads events written by WriteJSONLines. Blank lines are
// skipped; an error names the line it happened on.
func ReadJSONLines(r io.Reader) ([]Event, error) {
	br := bufio.NewReader(r)
	var events []Event
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return events, fmt.Errorf("diagnostics: read events line %d: %w", line, err)
		}
		if b = bytes.TrimSpace(b); len(b) > 0 {
			var e Event
			if jerr := json.Unmarshal(b, &e); jerr != nil {
				return events, fmt.Errorf("diagnostics: read events line %d: %w", line, jerr)
			}
			events = append(events, e)
		}
		if err != nil {
			return events, nil
		}
	}
}
