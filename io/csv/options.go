package csv

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BadRowPolicy says what reading does with a malformed row.
type BadRowPolicy int

const (
	// Fail stops reading at the first malformed row with a *ParseError.
	Fail BadRowPolicy = iota
	// Skip drops malformed rows and reports each as a BadRow.
	Skip
)

func (p BadRowPolicy) String() string {
	switch p {
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("BadRowPolicy(%d)", int(p))
}

// DefaultNullValues are the texts read as null when Options.NullValues is nil.
var DefaultNullValues = []string{"", "NA", "N/A", "NULL", "null", "NaN", "nan"}

// Options say how to read a set of CSV files. The zero value reads
// comma-separated files with a header line and infers the column types.
//
// Options contain only plain data, so that a Plan made from them can be sent
// to another process.
type Options struct {
	// Delimiter separates fields; default ','.
	Delimiter byte
	// Quote encloses fields that contain the delimiter, quotes or line
	// breaks; default '"'. Inside a quoted field a doubled quote stands for
	// one quote. A quote may only open a field: a quote in the middle of an
	// unquoted field is an error.
	Quote byte
	// NoHeader says the first line is data. Column names then come from
	// Columns, from Schema, or are "column_0", "column_1", ...
	NoHeader bool
	// Columns names the columns, replacing the names of the header line if
	// there is one. There must be one name per column.
	Columns []string
	// Schema gives every column's name and type, which then are not
	// inferred. With a header, the header's names must match the schema's.
	Schema *arrow.Schema
	// Types sets the types of some columns by name, overriding inference.
	// Supported: int8..int64, uint8..uint64, float32, float64, bool, string,
	// date32, timestamp (any unit, with or without time zone) and
	// dictionary<int32, utf8>.
	Types map[string]arrow.DataType
	// ParseDates reads the named columns as dates or timestamps with a Go
	// time layout (see package time). The column is date32 when the layout
	// has no clock, timestamp[ns] otherwise (in UTC when the layout has a
	// zone). An empty layout means ISO 8601 (2006-01-02, or a timestamp such
	// as 2006-01-02T15:04:05.999Z07:00 or 2006-01-02 15:04:05).
	// A value that does not fit the layout is an error.
	ParseDates map[string]string
	// NullValues are the texts read as null; nil means DefaultNullValues.
	// Quoted text in a string column is never null, so "" is an empty string.
	NullValues []string
	// SampleBytes is how much of the first file is read to infer types;
	// default 1 MiB.
	SampleBytes int
	// BlockSize is the size in bytes of the parts files are split into for
	// reading in parallel. Parts start and end on row boundaries. The
	// default is 64 MiB, or less for small inputs (down to 4 MiB) so that
	// they still make two blocks per processor.
	BlockSize int64
	// Dictionary lists string columns to read as dictionary<int32, utf8>,
	// which makes grouping on low-cardinality keys cheap. Each block has its
	// own dictionary.
	Dictionary []string
	// BadRows says what to do with malformed rows: Fail (default) or Skip.
	BadRows BadRowPolicy
	// NoNewlinesInQuotes promises that no quoted field contains a line
	// break. Planning then does not read whole files to find where quoted
	// fields begin and end. A quoted line break is still detected, as an
	// error, if the promise is broken.
	NoNewlinesInQuotes bool
	// MaxLineBytes bounds the header line, and a row that crosses a
	// block's boundary; default 16 MiB. A longer one is an error wrapping
	// ErrLineTooLong that names the file: most often the file is not CSV,
	// or its lines end in a way this reader does not take (a lone "\r").
	// Raise it to read longer lines.
	MaxLineBytes int
}

const (
	defaultSampleBytes = 1 << 20
	defaultBlockSize   = 64 << 20
	defaultMaxLine     = 16 << 20
	minDefaultBlock    = 4 << 20
	maxBlockSize       = 1 << 30
)

// normalize returns o with defaults filled in, or an error if o is invalid.
func (o Options) normalize() (Options, error) {
	if o.Delimiter == 0 {
		o.Delimiter = ','
	}
	if o.Quote == 0 {
		o.Quote = '"'
	}
	switch {
	case o.Delimiter == o.Quote:
		return o, fmt.Errorf("csv: delimiter and quote are both %q", o.Delimiter)
	case o.Delimiter == '\n' || o.Delimiter == '\r':
		return o, fmt.Errorf("csv: delimiter %q is a line break", o.Delimiter)
	case o.Quote == '\n' || o.Quote == '\r':
		return o, fmt.Errorf("csv: quote %q is a line break", o.Quote)
	}
	if o.NullValues == nil {
		o.NullValues = DefaultNullValues
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = defaultMaxLine
	}
	if o.SampleBytes <= 0 {
		o.SampleBytes = defaultSampleBytes
	}
	if o.BlockSize > maxBlockSize {
		return o, fmt.Errorf("csv: block size %d is larger than the maximum, %d", o.BlockSize, maxBlockSize)
	}
	if o.BadRows != Fail && o.BadRows != Skip {
		return o, fmt.Errorf("csv: unknown bad-row policy %d", int(o.BadRows))
	}
	o.NullValues = slices.Clone(o.NullValues)
	o.Columns = slices.Clone(o.Columns)
	o.Dictionary = slices.Clone(o.Dictionary)
	return o, nil
}

// ReadOptions say what ReadBlock returns from a block.
type ReadOptions struct {
	// Columns selects columns by name, in this order; nil means all.
	Columns []string
	// Filter, if set, is applied to each batch of rows as it is parsed; only
	// the rows it returns are kept, so rows it drops are never accumulated.
	// Its input has the selected columns and the batch is released after the
	// call; it returns a new batch (or the input, retained) that ReadBlock
	// releases.
	Filter func(arrow.RecordBatch) (arrow.RecordBatch, error)
	// BatchRows is the number of rows per batch passed to Filter; default
	// 65536.
	BatchRows int
	// Allocator allocates the returned record's buffers; nil means Go memory.
	Allocator memory.Allocator
}

// WriteOptions say how Write formats CSV.
type WriteOptions struct {
	// Delimiter separates fields; default ','.
	Delimiter byte
	// Quote encloses fields that need it; default '"'.
	Quote byte
	// NoHeader leaves out the header line.
	NoHeader bool
	// Null is written for null values; default "" (an empty field).
	Null string
	// CRLF ends lines with "\r\n" instead of "\n".
	CRLF bool
}
