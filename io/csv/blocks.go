package csv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/shoal-data/shoal/internal/units"
	"github.com/shoal-data/shoal/io/storage"
)

// splitFile splits the data of a file into blocks of about o.BlockSize
// bytes that start and end on row boundaries.
//
// A row boundary is a line break outside quotes. Whether a position is
// inside quotes follows from the parity of the number of quote bytes before
// it (doubled quotes count twice, so they keep the parity), so planning
// counts the quotes of each block-sized segment of the file in parallel and
// then, from each nominal boundary, scans forward to the first line break
// outside quotes. With Options.NoNewlinesInQuotes the count is skipped.
func splitFile(ctx context.Context, fsys storage.FS, h fileHead, fileIndex int, o Options) ([]Block, error) {
	start, size := h.dataStart, h.size
	if size-start <= o.BlockSize {
		return []Block{{Path: h.path, File: fileIndex, Offset: start, Length: size - start}}, nil
	}
	f, err := fsys.Open(ctx, h.path)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	defer f.Close()
	// Scan points s_k = start + k*BlockSize - 1 for k = 1..m-1; a block
	// boundary is just after the first line break at or after s_k.
	m := int((size - start + o.BlockSize - 1) / o.BlockSize)
	points := make([]int64, m) // points[0] = start
	points[0] = start
	for k := 1; k < m; k++ {
		points[k] = start + int64(k)*o.BlockSize - 1
	}
	inQuotes := make([]bool, m) // parity of quotes in [start, points[k])
	if !o.NoNewlinesInQuotes {
		counts, err := countQuotes(ctx, f, points, o.Quote)
		if err != nil {
			return nil, fmt.Errorf("csv: read %s: %w", h.path, err)
		}
		total := 0
		for k := 1; k < m; k++ {
			total += counts[k-1]
			inQuotes[k] = total%2 == 1
		}
	}
	bounds := []int64{start}
	buf := make([]byte, 64<<10)
	for k := 1; k < m; k++ {
		b, err := nextRowStart(f, buf, points[k], min(size, points[k]+int64(o.MaxLineBytes)+1), inQuotes[k], o.Quote, !o.NoNewlinesInQuotes)
		if err != nil {
			return nil, fmt.Errorf("csv: read %s: %w", h.path, err)
		}
		if b-points[k] > int64(o.MaxLineBytes) {
			return nil, fmt.Errorf("csv: %s: %w: no end of row in the %s after byte %d (Options.MaxLineBytes; raise it if rows are that long)",
				h.path, ErrLineTooLong, units.Bytes(int64(o.MaxLineBytes)), points[k])
		}
		if b > bounds[len(bounds)-1] && b < size {
			bounds = append(bounds, b)
		}
	}
	bounds = append(bounds, size)
	blocks := make([]Block, 0, len(bounds)-1)
	for i := 0; i+1 < len(bounds); i++ {
		blocks = append(blocks, Block{Path: h.path, File: fileIndex, Offset: bounds[i], Length: bounds[i+1] - bounds[i]})
	}
	return blocks, nil
}

// countQuotes returns, for each segment [points[k], points[k+1]) (the last
// ending at the file's end is not needed), how many quote bytes it holds.
// Segments are counted in parallel.
func countQuotes(ctx context.Context, f storage.File, points []int64, quote byte) ([]int, error) {
	segs := len(points) - 1
	counts := make([]int, segs)
	workers := min(runtime.GOMAXPROCS(0), segs)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int, segs)
	)
	for k := range segs {
		next <- k
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for k := range next {
				n, err := countRange(ctx, f, buf, points[k], points[k+1], quote)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				counts[k] = n
			}
		}()
	}
	wg.Wait()
	return counts, first
}

func countRange(ctx context.Context, f storage.File, buf []byte, from, to int64, quote byte) (int, error) {
	n := 0
	for off := from; off < to; {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		chunk := buf[:min(int64(len(buf)), to-off)]
		if _, err := f.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		n += bytes.Count(chunk, []byte{quote})
		off += int64(len(chunk))
	}
	return n, nil
}

// nextRowStart returns the position just after the first line break at or
// after from and before size that is outside quotes (any line break unless
// useQuotes), or size if there is none.
func nextRowStart(f storage.File, buf []byte, from, size int64, inQuotes bool, quote byte, useQuotes bool) (int64, error) {
	for off := from; off < size; {
		chunk := buf[:min(int64(len(buf)), size-off)]
		if _, err := f.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := 0; i < len(chunk); {
			if inQuotes {
				k := bytes.IndexByte(chunk[i:], quote)
				if k < 0 {
					break
				}
				i += k + 1
				inQuotes = false
				continue
			}
			nl := bytes.IndexByte(chunk[i:], '\n')
			q := -1
			if useQuotes {
				q = bytes.IndexByte(chunk[i:], quote)
			}
			if nl >= 0 && (q < 0 || nl < q) {
				return off + int64(i+nl+1), nil
			}
			if q < 0 {
				break
			}
			i += q + 1
			inQuotes = true
		}
		off += int64(len(chunk))
	}
	return size, nil
}
