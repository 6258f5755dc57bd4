package jsonl

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/shoal-data/shoal/graph"
)

// Errors that callers may test for with errors.Is.
var (
	// ErrUnknownColumn: a requested column does not exist.
	ErrUnknownColumn = errors.New("no such column")
	// ErrSchemaMismatch: a value does not fit the type of its column, or
	// a key is not in the schema.
	ErrSchemaMismatch = errors.New("value does not fit the schema")
	// ErrSyntax: a line is not a JSON object.
	ErrSyntax = errors.New("malformed JSON")
)

// ParseError is an error in a line of input: which file, line and byte,
// which key, and the text around it.
type ParseError struct {
	Path string
	Line int64 // 1-based
	Byte int   // 1-based position in the line
	Key  string
	// Text is the line, cut to about 80 bytes around the error.
	Text string
	Err  error
}

func (e *ParseError) Error() string {
	key := ""
	if e.Key != "" {
		key = " key " + strconv.Quote(e.Key) + ":"
	}
	return fmt.Sprintf("jsonl: %s:%d:%d:%s %v, in: %s", e.Path, e.Line, e.Byte, key, e.Err, e.Text)
}

// Unwrap returns the cause, which wraps ErrSyntax or ErrSchemaMismatch.
func (e *ParseError) Unwrap() error { return e.Err }

// excerpt cuts a line to about 80 bytes around pos, marking the cuts.
func excerpt(line []byte, pos int) string {
	const width = 80
	start := max(0, min(pos-width/2, len(line)-width))
	end := min(len(line), start+width)
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start--
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	s := string(line[start:end])
	if start > 0 {
		s = "..." + s
	}
	if end < len(line) {
		s += "..."
	}
	return s
}

// The errors of a read keep their type when they cross a process
// boundary (see graph.RegisterError).
func init() {
	graph.RegisterError[ParseError]("jsonl.ParseError")
	graph.RegisterErrorValue("jsonl.ErrUnknownColumn", ErrUnknownColumn)
	graph.RegisterErrorValue("jsonl.ErrSchemaMismatch", ErrSchemaMismatch)
	graph.RegisterErrorValue("jsonl.ErrSyntax", ErrSyntax)
}
