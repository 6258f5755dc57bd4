package csv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/shoal-data/shoal/graph"
)

// Plans and options carry Arrow schemas and types, which encoding/gob and
// encoding/json cannot encode; MarshalBinary encodes them as Arrow IPC
// schemas inside a JSON document.

type wireOptions struct {
	Delimiter          byte
	Quote              byte
	NoHeader           bool
	Columns            []string
	Schema             []byte `json:",omitempty"`
	Types              []byte `json:",omitempty"` // a schema with one field per entry
	ParseDates         map[string]string
	NullValues         []string
	SampleBytes        int
	BlockSize          int64
	Dictionary         []string
	BadRows            BadRowPolicy
	NoNewlinesInQuotes bool
}

type wirePlan struct {
	Schema     []byte
	Files      []string
	Blocks     []Block
	Options    json.RawMessage
	RowBytes   float64
	FieldBytes []float64
	Inferred   []bool
}

func encodeSchema(s *arrow.Schema) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeSchema(b []byte) (*arrow.Schema, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r, err := graph.NewArrowReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// MarshalBinary encodes the options.
func (o Options) MarshalBinary() ([]byte, error) {
	w := wireOptions{Delimiter: o.Delimiter, Quote: o.Quote, NoHeader: o.NoHeader, Columns: o.Columns,
		ParseDates: o.ParseDates, NullValues: o.NullValues, SampleBytes: o.SampleBytes, BlockSize: o.BlockSize,
		Dictionary: o.Dictionary, BadRows: o.BadRows, NoNewlinesInQuotes: o.NoNewlinesInQuotes}
	var err error
	if w.Schema, err = encodeSchema(o.Schema); err != nil {
		return nil, fmt.Errorf("csv: encode options: %w", err)
	}
	if len(o.Types) > 0 {
		names := keysOf(o.Types)
		sort.Strings(names)
		fields := make([]arrow.Field, len(names))
		for i, n := range names {
			fields[i] = arrow.Field{Name: n, Type: o.Types[n], Nullable: true}
		}
		if w.Types, err = encodeSchema(arrow.NewSchema(fields, nil)); err != nil {
			return nil, fmt.Errorf("csv: encode options: %w", err)
		}
	}
	return json.Marshal(w)
}

// UnmarshalBinary decodes options encoded by MarshalBinary.
func (o *Options) UnmarshalBinary(b []byte) error {
	var w wireOptions
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("csv: decode options: %w", err)
	}
	*o = Options{Delimiter: w.Delimiter, Quote: w.Quote, NoHeader: w.NoHeader, Columns: w.Columns,
		ParseDates: w.ParseDates, NullValues: w.NullValues, SampleBytes: w.SampleBytes, BlockSize: w.BlockSize,
		Dictionary: w.Dictionary, BadRows: w.BadRows, NoNewlinesInQuotes: w.NoNewlinesInQuotes}
	var err error
	if o.Schema, err = decodeSchema(w.Schema); err != nil {
		return fmt.Errorf("csv: decode options: schema: %w", err)
	}
	types, err := decodeSchema(w.Types)
	if err != nil {
		return fmt.Errorf("csv: decode options: types: %w", err)
	}
	if types != nil {
		o.Types = map[string]arrow.DataType{}
		for _, f := range types.Fields() {
			o.Types[f.Name] = f.Type
		}
	}
	return nil
}

// MarshalBinary encodes the plan, so that blocks can be read in another
// process.
func (p *Plan) MarshalBinary() ([]byte, error) {
	opts, err := p.Options.MarshalBinary()
	if err != nil {
		return nil, err
	}
	w := wirePlan{Files: p.Files, Blocks: p.Blocks, Options: opts, RowBytes: p.RowBytes, FieldBytes: p.fieldBytes, Inferred: p.inferred}
	if w.Schema, err = encodeSchema(p.Schema); err != nil {
		return nil, fmt.Errorf("csv: encode plan: %w", err)
	}
	return json.Marshal(w)
}

// UnmarshalBinary decodes a plan encoded by MarshalBinary.
func (p *Plan) UnmarshalBinary(b []byte) error {
	var w wirePlan
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("csv: decode plan: %w", err)
	}
	*p = Plan{Files: w.Files, Blocks: w.Blocks, RowBytes: w.RowBytes, fieldBytes: w.FieldBytes, inferred: w.Inferred}
	if err := p.Options.UnmarshalBinary(w.Options); err != nil {
		return err
	}
	var err error
	if p.Schema, err = decodeSchema(w.Schema); err != nil {
		return fmt.Errorf("csv: decode plan: schema: %w", err)
	}
	return nil
}
