package csv

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/internal/h2o"
)

// BenchmarkParse measures the parser alone: an in-memory chunk of the H2O
// table into columns that are reused, so no file reading and no fresh
// memory.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if err := h2o.WriteCSV(&buf, 100_000, h2o.DefaultK, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()[bytes.IndexByte(buf.Bytes(), '\n')+1:]
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	for _, tc := range []struct {
		name string
		dict bool
	}{{"plain", false}, {"dict", true}} {
		b.Run(tc.name, func(b *testing.B) {
			schema := h2o.Schema()
			cols := make([]column, schema.NumFields())
			for j, f := range schema.Fields() {
				if tc.dict && f.Type.ID() == arrow.STRING {
					f.Type = dict
				}
				c, err := newColumn(arrow.Field{Name: f.Name, Type: f.Type}, "", false)
				if err != nil {
					b.Fatal(err)
				}
				cols[j] = c
				cols[j].reserve(100_000, 12)
			}
			p := newParser(',', '"', cols, DefaultNullValues, false, false, int(^uint(0)>>1))
			defer p.release()
			b.SetBytes(int64(len(data)))
			cpu0 := cpuTime()
			for b.Loop() {
				p.nrows = 0
				for j := range cols {
					cols[j].dataLen = 0
				}
				if n, err := p.parse(data, 0, true); err != nil || n != len(data) || p.nrows != 100_000 {
					b.Fatal(n, err, p.nrows)
				}
			}
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
			}
		})
	}
}
