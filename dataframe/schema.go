package dataframe

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/internal/suggest"

	"github.com/shoal-data/shoal/graph"
)

// encodeSchema writes a schema as an Arrow IPC stream with no batches, the
// portable form of a schema in task params.
func encodeSchema(s *arrow.Schema) ([]byte, error) {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func decodeSchema(b []byte) (*arrow.Schema, error) {
	r, err := graph.NewArrowReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	defer r.Release()
	return r.Schema(), nil
}

// fieldIndex returns the index of a column, or an error naming it and the
// columns there are.
func fieldIndex(s *arrow.Schema, name string) (int, error) {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		return -1, columnError(name, schemaNames(s))
	}
	return idx[0], nil
}

func schemaNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// ColumnError says that a column does not exist; it names the column,
// the columns there are and the closest name.
type ColumnError = expr.ColumnNotFoundError

func columnError(name string, have []string) error {
	return &ColumnError{Name: name, Available: have, Suggest: suggest.Closest(name, have)}
}
