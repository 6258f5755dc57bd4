package parquet

import (
	"encoding/binary"
	"fmt"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

func isDelta(e format.Encoding) bool {
	return e == format.DeltaBinaryPacked || e == format.DeltaLengthByteArray || e == format.DeltaByteArray
}

// walkPages calls fn for each page of buf, which holds whole pages: the
// header and the (compressed) bytes after it.
func walkPages(buf []byte, fn func(h *format.PageHeader, body []byte) error) error {
	proto := &thrift.CompactProtocol{}
	for len(buf) > 0 {
		if _, err := checkThrift(buf); err != nil {
			return fmt.Errorf("page header: %w", err)
		}
		var h format.PageHeader
		r := proto.NewReaderFromBytes(buf)
		if err := thrift.NewDecoder(r).Decode(&h); err != nil {
			return fmt.Errorf("%w: page header: %w", ErrCorrupt, err)
		}
		n := r.BytesRead()
		size := int64(h.CompressedPageSize)
		if size < 0 || int64(n)+size > int64(len(buf)) {
			return fmt.Errorf("%w: page of %d bytes beyond its column chunk", ErrCorrupt, size)
		}
		if err := fn(&h, buf[n:int64(n)+size]); err != nil {
			return err
		}
		buf = buf[int64(n)+size:]
	}
	return nil
}

// checkPages checks the page headers of the loaded bytes of a column chunk
// against its metadata before the Parquet library, which trusts them,
// allocates what they ask for.
func checkPages(spans []loaded, m *format.ColumnMetaData, maxDef byte) error {
	maxSize := max(m.TotalUncompressedSize, 0)
	var scratch []byte
	comp := pq.LookupCompressionCodec(m.Codec)
	// checkDelta checks the value count of the DELTA-encoded values of a
	// page: the decoder allocates that many.
	checkDelta := func(values []byte, compressed bool, levels []byte, maxValues int64) error {
		if compressed && m.Codec != format.Uncompressed {
			var err error
			if scratch, err = comp.Decode(scratch[:0], values); err != nil {
				return fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			values = scratch
		}
		if levels != nil {
			// Data page v1: the levels come first, after their length.
			if len(values) < 4 {
				return fmt.Errorf("%w: data page too short", ErrCorrupt)
			}
			l := int64(binary.LittleEndian.Uint32(values))
			if 4+l > int64(len(values)) {
				return fmt.Errorf("%w: definition levels beyond the page", ErrCorrupt)
			}
			values = values[4+l:]
		}
		// block size, miniblocks per block, value count
		for range 2 {
			_, k := binary.Uvarint(values)
			if k <= 0 {
				return fmt.Errorf("%w: DELTA header", ErrCorrupt)
			}
			values = values[k:]
		}
		n, k := binary.Uvarint(values)
		if k <= 0 || n > uint64(maxValues) {
			return fmt.Errorf("%w: DELTA header of %d values in a page of %d", ErrCorrupt, n, maxValues)
		}
		return nil
	}
	for _, s := range spans {
		err := walkPages(s.data, func(h *format.PageHeader, body []byte) error {
			usize := int64(h.UncompressedPageSize)
			if usize < 0 || usize > maxSize {
				return fmt.Errorf("%w: page of %d bytes uncompressed in a column chunk of %d", ErrCorrupt, usize, maxSize)
			}
			compressed := body
			switch h.Type {
			case format.DataPage:
				if !h.DataPageHeader.Valid {
					return fmt.Errorf("%w: data page without its header", ErrCorrupt)
				}
				v1 := &h.DataPageHeader.V
				if v := int64(v1.NumValues); v < 0 || v > m.NumValues {
					return fmt.Errorf("%w: page of %d values in a column chunk of %d", ErrCorrupt, v, m.NumValues)
				}
				if isDelta(v1.Encoding) {
					var levels []byte
					if maxDef > 0 {
						levels = []byte{}
					}
					if err := checkDelta(body, true, levels, int64(v1.NumValues)); err != nil {
						return err
					}
				}
			case format.DataPageV2:
				if !h.DataPageHeaderV2.Valid {
					return fmt.Errorf("%w: data page without its header", ErrCorrupt)
				}
				v2 := &h.DataPageHeaderV2.V
				if v := int64(v2.NumValues); v < 0 || v > m.NumValues || v2.NumNulls < 0 || v2.NumNulls > v2.NumValues || v2.NumRows < 0 || v2.NumRows > v2.NumValues {
					return fmt.Errorf("%w: page of %d values, %d nulls and %d rows in a column chunk of %d values", ErrCorrupt, v2.NumValues, v2.NumNulls, v2.NumRows, m.NumValues)
				}
				levels := int64(v2.DefinitionLevelsByteLength) + int64(v2.RepetitionLevelsByteLength)
				if v2.DefinitionLevelsByteLength < 0 || v2.RepetitionLevelsByteLength < 0 || levels > int64(len(body)) {
					return fmt.Errorf("%w: levels of %d bytes in a page of %d", ErrCorrupt, levels, len(body))
				}
				compressed = body[levels:]
				if v2.IsCompressed.Valid && !v2.IsCompressed.V {
					compressed = nil
				}
				if isDelta(v2.Encoding) {
					if err := checkDelta(body[levels:], compressed != nil, nil, int64(v2.NumValues)); err != nil {
						return err
					}
				}
			case format.DictionaryPage:
				if !h.DictionaryPageHeader.Valid {
					return fmt.Errorf("%w: dictionary page without its header", ErrCorrupt)
				}
				// A value takes at least a bit.
				if v := int64(h.DictionaryPageHeader.V.NumValues); v < 0 || v > 8*usize+8 {
					return fmt.Errorf("%w: dictionary of %d values in %d bytes", ErrCorrupt, v, usize)
				}
			default:
				return nil
			}
			if len(compressed) > 0 {
				return checkCompressed(m.Codec, compressed, usize)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkCompressed checks that compressed data does not decompress to more
// than size bytes, as far as its headers tell, so that decompressors do not
// allocate what a damaged header asks for.
func checkCompressed(codec format.CompressionCodec, b []byte, size int64) error {
	switch codec {
	case format.Snappy:
		// A snappy block starts with its decoded length.
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(size) {
			return fmt.Errorf("%w: snappy block of %d bytes in a page of %d", ErrCorrupt, n, size)
		}
	case format.Zstd:
		if n, ok := zstdContentSize(b); ok && n > uint64(size) {
			return fmt.Errorf("%w: zstd frame of %d bytes in a page of %d", ErrCorrupt, n, size)
		}
	}
	return nil
}

// zstdContentSize reads the content size from the header of the zstd frame
// at the start of b, when it has one.
func zstdContentSize(b []byte) (uint64, bool) {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return 0, false
	}
	desc := b[4]
	single := desc>>5&1 == 1
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[desc&3] // dictionary id
	fcsSize := [4]int{0, 2, 4, 8}[desc>>6]
	if desc>>6 == 0 && single {
		fcsSize = 1
	}
	if fcsSize == 0 || pos+fcsSize > len(b) {
		return 0, false
	}
	var n uint64
	for i := fcsSize - 1; i >= 0; i-- {
		n = n<<8 | uint64(b[pos+i])
	}
	if fcsSize == 2 {
		n += 256
	}
	return n, true
}
