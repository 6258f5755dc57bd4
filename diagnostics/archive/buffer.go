package archive

import (
	"io"

	pq "github.com/parquet-go/parquet-go"
)

// rowPtr is a pointer to a row of a table.
type rowPtr[T any] interface {
	*T
	stamp(cluster string)
}

// buffer holds the rows of one table until they are written.
type buffer interface {
	len() int
	// take empties the buffer and returns a function that writes what it
	// held as a Parquet file.
	take() func(io.Writer) error
}

// chunkRows is the size of the chunks that hold rows: rows are never moved
// once queued, however many there are.
const chunkRows = 1024

// rows holds rows of type T in chunks.
type rows[T any] struct {
	full [][]T // chunks of chunkRows rows
	cur  []T   // the chunk being filled
	n    int
}

func (b *rows[T]) len() int { return b.n }

func (b *rows[T]) push(r T) {
	if len(b.cur) == cap(b.cur) {
		if b.cur != nil {
			b.full = append(b.full, b.cur)
		}
		b.cur = make([]T, 0, chunkRows)
	}
	b.cur = append(b.cur, r)
	b.n++
}

func (b *rows[T]) take() func(io.Writer) error {
	chunks := b.full
	if len(b.cur) > 0 {
		chunks = append(chunks, b.cur)
	}
	*b = rows[T]{}
	return func(w io.Writer) error {
		pw := pq.NewGenericWriter[T](w, pq.Compression(&pq.Snappy))
		for _, c := range chunks {
			if _, err := pw.Write(c); err != nil {
				return err
			}
		}
		return pw.Close()
	}
}
