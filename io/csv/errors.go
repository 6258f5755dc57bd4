package csv

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/shoal-data/shoal/graph"
)

// Errors that a *ParseError or a planning error wraps, for errors.Is.
var (
	// ErrFieldCount: a row has more or fewer fields than the header.
	ErrFieldCount = errors.New("wrong number of fields")
	// ErrQuote: an unterminated quoted field, text after a closing quote, or
	// a quote in the middle of an unquoted field.
	ErrQuote = errors.New("bad quoting")
	// ErrValue: a value does not parse as its column's type.
	ErrValue = errors.New("bad value")
	// ErrEmptyFile: a file has no header line and no schema was given.
	ErrEmptyFile = errors.New("empty file")
	// ErrHeaderMismatch: files of one read have different header lines.
	ErrHeaderMismatch = errors.New("different columns")
	// ErrLineTooLong: the header line, or a row that crosses a block's
	// boundary, is longer than Options.MaxLineBytes.
	ErrLineTooLong = errors.New("line too long")
)

// ParseError is a malformed row: where it is and what is wrong.
type ParseError struct {
	Path   string // file
	Line   int64  // physical line in the file, 1-based
	Column int    // 1-based column number; 0 when the row as a whole is wrong
	Name   string // column name, when Column > 0 names a column of the header
	Text   string // the offending text, truncated to about 60 bytes
	Err    error  // what is wrong; wraps ErrFieldCount, ErrQuote or ErrValue
}

func (e *ParseError) Error() string {
	loc := fmt.Sprintf("csv: %s line %d", e.Path, e.Line)
	switch {
	case e.Name != "":
		loc += fmt.Sprintf(", column %d %q", e.Column, e.Name)
	case e.Column > 0:
		loc += fmt.Sprintf(", column %d", e.Column)
	}
	return fmt.Sprintf("%s: %v: %q", loc, e.Err, e.Text)
}

func (e *ParseError) Unwrap() error { return e.Err }

// BadRow is a malformed row that was skipped (Options.BadRows = Skip).
type BadRow struct {
	Path   string
	Line   int64  // physical line in the file, 1-based
	Column int    // 1-based column number; 0 when the row as a whole is wrong
	Text   string // the offending text, truncated
	Err    string // what is wrong
}

const maxErrText = 60

// truncText returns b as a string of at most about maxErrText bytes, cut on
// a character boundary, with "..." when cut.
func truncText(b []byte) string {
	if len(b) <= maxErrText {
		return string(b)
	}
	n := maxErrText
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "..."
}

// The errors of a read keep their type when they cross a process
// boundary (see graph.RegisterError).
func init() {
	graph.RegisterError[ParseError]("csv.ParseError")
	graph.RegisterErrorValue("csv.ErrFieldCount", ErrFieldCount)
	graph.RegisterErrorValue("csv.ErrQuote", ErrQuote)
	graph.RegisterErrorValue("csv.ErrValue", ErrValue)
	graph.RegisterErrorValue("csv.ErrEmptyFile", ErrEmptyFile)
	graph.RegisterErrorValue("csv.ErrHeaderMismatch", ErrHeaderMismatch)
	graph.RegisterErrorValue("csv.ErrLineTooLong", ErrLineTooLong)
}
