package dataframe

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/shoal-data/shoal/dataframe/expr"
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
	r, err := ipc.NewReader(bytes.NewReader(b))
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
	return &ColumnError{Name: name, Available: have, Suggest: closest(name, have)}
}

// closest returns the name nearest to s by edit distance, if it is near.
func closest(s string, names []string) string {
	best, bestD := "", len(s)/2+2
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
