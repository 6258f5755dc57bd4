package dataframe

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// FormatTable renders a table as aligned text, like pandas prints a frame:
// a header of column names, then up to maxRows rows (the first and last
// halves when there are more), numbers right-aligned, nulls as "null".
// maxRows <= 0 means 20.
func FormatTable(t arrow.Table, maxRows int) string {
	if maxRows <= 0 {
		maxRows = 20
	}
	n := int(t.NumRows())
	var rows []int
	skipped := false
	if n <= maxRows {
		for i := range n {
			rows = append(rows, i)
		}
	} else {
		for i := range maxRows / 2 {
			rows = append(rows, i)
		}
		for i := n - (maxRows - maxRows/2); i < n; i++ {
			rows = append(rows, i)
		}
		skipped = true
	}
	ncol := int(t.NumCols())
	cells := make([][]string, len(rows)+1)
	right := make([]bool, ncol)
	cells[0] = make([]string, ncol)
	for j := range ncol {
		f := t.Schema().Field(j)
		cells[0][j] = f.Name
		right[j] = isNumeric(f.Type)
	}
	for r, i := range rows {
		cells[r+1] = make([]string, ncol)
		for j := range ncol {
			cells[r+1][j] = cellText(t.Column(j).Data(), i)
		}
	}
	width := make([]int, ncol)
	for _, row := range cells {
		for j, c := range row {
			width[j] = max(width[j], len(c))
		}
	}
	var b strings.Builder
	var line strings.Builder
	endLine := func() { // no trailing spaces
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
		line.Reset()
	}
	for r, row := range cells {
		if skipped && r == maxRows/2+1 {
			for j := range ncol {
				if j > 0 {
					line.WriteString("  ")
				}
				line.WriteString(pad("...", width[j], right[j]))
			}
			endLine()
		}
		for j, c := range row {
			if j > 0 {
				line.WriteString("  ")
			}
			line.WriteString(pad(c, width[j], right[j] && r > 0))
		}
		endLine()
	}
	fmt.Fprintf(&b, "[%d rows x %d columns]\n", n, ncol)
	return b.String()
}

func pad(s string, w int, right bool) string {
	if len(s) >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-len(s)) + s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// cellText finds row i in a chunked column and formats it.
func cellText(c *arrow.Chunked, i int) string {
	for _, a := range c.Chunks() {
		if i < a.Len() {
			v, err := goValue(a, i)
			if err != nil {
				return "?"
			}
			return formatValue(v, a.DataType())
		}
		i -= a.Len()
	}
	return ""
}

func formatValue(v any, t arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
		return strconv.FormatFloat(x, 'g', 10, 64)
	case time.Time:
		if t.ID() == arrow.DATE32 {
			return x.Format("2006-01-02")
		}
		if x.Nanosecond() == 0 {
			return x.Format("2006-01-02 15:04:05")
		}
		return x.Format("2006-01-02 15:04:05.999999999")
	case string:
		if len(x) > 40 {
			return x[:37] + "..."
		}
		return x
	}
	return fmt.Sprint(v)
}

// formatRecord renders a record; used in error messages and tests.
func formatRecord(rec arrow.RecordBatch, maxRows int) string {
	t := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer t.Release()
	return FormatTable(t, maxRows)
}
