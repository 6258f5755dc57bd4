package parquet

// Some writers (DuckDB among them) compute the deltas of INT32 columns
// stored with DELTA_BINARY_PACKED in 64-bit arithmetic, which can need 33
// or more bits per delta. The Parquet library decodes such pages with
// 32-bit arithmetic and gets wrong values without an error. This file
// decodes those pages again with 64-bit arithmetic, which gives the right
// values for both kinds of writers (the results agree modulo 2^32).

import (
	"encoding/binary"
	"fmt"
	"slices"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/format"
)

// needsWideDelta reports whether a column chunk holds INT32 values stored
// with DELTA_BINARY_PACKED.
func needsWideDelta(c *fileColumn, m *format.ColumnMetaData) bool {
	return c.elem.Type.V == format.Int32 && slices.Contains(m.Encoding, format.DeltaBinaryPacked)
}

// widePage is a page whose values were decoded again.
type widePage struct {
	pq.Page
	vals []int32
}

func (p *widePage) Data() encoding.Values { return encoding.Int32Values(p.vals) }

// wideDeltaPages decodes the DELTA_BINARY_PACKED data pages of an INT32
// column chunk with 64-bit arithmetic. It returns one entry per data page,
// in order: the page's non-null values, or nil for pages with another
// encoding.
func wideDeltaPages(chunk []byte, codec format.CompressionCodec, maxDef byte) ([][]int32, error) {
	var pages [][]int32
	var scratch []byte
	var wide []int64
	comp := pq.LookupCompressionCodec(codec)
	decompress := func(b []byte) ([]byte, error) {
		if codec == format.Uncompressed {
			return b, nil
		}
		var err error
		if scratch, err = comp.Decode(scratch[:0], b); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return scratch, nil
	}
	err := walkPages(chunk, func(h *format.PageHeader, body []byte) error {
		var values []byte
		switch h.Type {
		case format.DataPage:
			if h.DataPageHeader.V.Encoding != format.DeltaBinaryPacked {
				pages = append(pages, nil)
				return nil
			}
			data, err := decompress(body)
			if err != nil {
				return err
			}
			if maxDef > 0 {
				if len(data) < 4 {
					return fmt.Errorf("%w: data page too short", ErrCorrupt)
				}
				l := int64(binary.LittleEndian.Uint32(data))
				if 4+l > int64(len(data)) {
					return fmt.Errorf("%w: definition levels beyond the page", ErrCorrupt)
				}
				data = data[4+l:]
			}
			values = data
		case format.DataPageV2:
			v2 := &h.DataPageHeaderV2.V
			if v2.Encoding != format.DeltaBinaryPacked {
				pages = append(pages, nil)
				return nil
			}
			values = body[int(v2.DefinitionLevelsByteLength)+int(v2.RepetitionLevelsByteLength):]
			if !v2.IsCompressed.Valid || v2.IsCompressed.V {
				var err error
				if values, err = decompress(values); err != nil {
					return err
				}
			}
		default:
			return nil // dictionary and index pages
		}
		var err error
		wide, err = (&delta.BinaryPackedEncoding{}).DecodeInt64(wide[:0], values)
		if err != nil {
			return fmt.Errorf("%w: DELTA_BINARY_PACKED values: %w", ErrCorrupt, err)
		}
		vals := make([]int32, len(wide))
		for i, v := range wide {
			vals[i] = int32(v) // modulo 2^32, as the encoding specifies
		}
		pages = append(pages, vals)
		return nil
	})
	return pages, err
}
