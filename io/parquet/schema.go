package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// fileColumn is a top-level column of a Parquet file.
type fileColumn struct {
	name     string
	leaf     int // index of the leaf column chunk in each row group; -1 for groups
	elem     format.SchemaElement
	optional bool
	nested   string // why the column cannot be read; "" when it can
}

// columnsOf lists the top-level columns of a file from its flattened schema.
func columnsOf(md *format.FileMetaData) ([]fileColumn, error) {
	schema := md.Schema
	if len(schema) == 0 {
		return nil, fmt.Errorf("%w: empty schema", ErrCorrupt)
	}
	n := int(schema[0].NumChildren.V)
	if n < 0 || n > len(schema) {
		return nil, fmt.Errorf("%w: schema root has %d children", ErrCorrupt, n)
	}
	cols := make([]fileColumn, 0, n)
	pos, leaf := 1, 0
	for range n {
		if pos >= len(schema) {
			return nil, fmt.Errorf("%w: schema ends early", ErrCorrupt)
		}
		e := schema[pos]
		c := fileColumn{name: e.Name, leaf: -1, elem: e, optional: e.RepetitionType.V != format.Required}
		if e.NumChildren.Valid && e.NumChildren.V > 0 {
			leaves, next, err := skipGroup(schema, pos)
			if err != nil {
				return nil, err
			}
			c.nested = "unsupported type " + groupKind(e)
			leaf += leaves
			pos = next
		} else {
			if !e.Type.Valid {
				return nil, fmt.Errorf("%w: column %q has no type", ErrCorrupt, e.Name)
			}
			if e.RepetitionType.Valid && e.RepetitionType.V == format.Repeated {
				c.nested = "unsupported type repeated " + e.Type.V.String()
			}
			c.leaf = leaf
			leaf++
			pos++
		}
		cols = append(cols, c)
	}
	for g, rg := range md.RowGroups {
		if len(rg.Columns) != leaf {
			return nil, fmt.Errorf("%w: row group %d has %d column chunks, the schema %d leaf columns", ErrCorrupt, g, len(rg.Columns), leaf)
		}
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("%w: row group %d has %d rows", ErrCorrupt, g, rg.NumRows)
		}
		// A column that is not nested has a value (maybe null) per row.
		for _, c := range cols {
			if c.leaf >= 0 && c.nested == "" {
				if n := rg.Columns[c.leaf].MetaData.NumValues; n != rg.NumRows {
					return nil, fmt.Errorf("%w: row group %d has %d rows, its column %q %d values", ErrCorrupt, g, rg.NumRows, c.name, n)
				}
			}
		}
	}
	return cols, nil
}

// skipGroup returns the number of leaves under the group at pos and the
// position after it.
func skipGroup(schema []format.SchemaElement, pos int) (leaves, next int, err error) {
	todo := 1
	for todo > 0 {
		if pos >= len(schema) {
			return 0, 0, fmt.Errorf("%w: schema ends inside a group", ErrCorrupt)
		}
		e := schema[pos]
		todo--
		if e.NumChildren.Valid && e.NumChildren.V > 0 {
			if int(e.NumChildren.V) > len(schema) {
				return 0, 0, fmt.Errorf("%w: group %q has %d children", ErrCorrupt, e.Name, e.NumChildren.V)
			}
			todo += int(e.NumChildren.V)
		} else {
			leaves++
		}
		pos++
	}
	return leaves, pos, nil
}

func groupKind(e format.SchemaElement) string {
	switch v := e.LogicalType.Value.(type) {
	case *format.ListType:
		return "LIST"
	case *format.MapType:
		return "MAP"
	case nil:
	default:
		return v.String()
	}
	if e.ConvertedType.Valid {
		switch e.ConvertedType.V {
		case deprecated.List:
			return "LIST"
		case deprecated.Map, deprecated.MapKeyValue:
			return "MAP"
		}
	}
	return "STRUCT"
}

// decimalInfo returns the scale and precision of a DECIMAL column.
func decimalInfo(e *format.SchemaElement) (scale, precision int32, ok bool) {
	if d, isDec := e.LogicalType.Value.(*format.DecimalType); isDec {
		return d.Scale, d.Precision, true
	}
	if e.LogicalType.Value == nil && e.ConvertedType.Valid && e.ConvertedType.V == deprecated.Decimal {
		return e.Scale.V, e.Precision.V, true
	}
	return 0, 0, false
}

// isString reports whether a BYTE_ARRAY column holds text.
func isString(e *format.SchemaElement) bool {
	switch e.LogicalType.Value.(type) {
	case *format.StringType, *format.EnumType, *format.JsonType:
		return true
	case nil:
		if e.ConvertedType.Valid {
			switch e.ConvertedType.V {
			case deprecated.UTF8, deprecated.Enum, deprecated.Json:
				return true
			}
		}
	}
	return false
}

// intInfo returns the width and signedness of an integer column with an
// INT logical type.
func intInfo(e *format.SchemaElement) (bits int, signed, ok bool) {
	if t, isInt := e.LogicalType.Value.(*format.IntType); isInt {
		return int(t.BitWidth), t.IsSigned, true
	}
	if e.LogicalType.Value != nil || !e.ConvertedType.Valid {
		return 0, false, false
	}
	switch e.ConvertedType.V {
	case deprecated.Int8:
		return 8, true, true
	case deprecated.Int16:
		return 16, true, true
	case deprecated.Int32:
		return 32, true, true
	case deprecated.Int64:
		return 64, true, true
	case deprecated.Uint8:
		return 8, false, true
	case deprecated.Uint16:
		return 16, false, true
	case deprecated.Uint32:
		return 32, false, true
	case deprecated.Uint64:
		return 64, false, true
	}
	return 0, false, false
}

func arrowUnit(u format.TimeUnit) (arrow.TimeUnit, bool) {
	switch u.Value.(type) {
	case *format.MilliSeconds:
		return arrow.Millisecond, true
	case *format.MicroSeconds:
		return arrow.Microsecond, true
	case *format.NanoSeconds:
		return arrow.Nanosecond, true
	}
	return 0, false
}

// timestampInfo returns the unit and UTC adjustment of a TIMESTAMP column.
func timestampInfo(e *format.SchemaElement) (unit arrow.TimeUnit, utc, ok bool) {
	if t, isTS := e.LogicalType.Value.(*format.TimestampType); isTS {
		u, ok := arrowUnit(t.Unit)
		return u, t.IsAdjustedToUTC, ok
	}
	if e.LogicalType.Value != nil || !e.ConvertedType.Valid {
		return 0, false, false
	}
	// The legacy converted types are instants (adjusted to UTC).
	switch e.ConvertedType.V {
	case deprecated.TimestampMillis:
		return arrow.Millisecond, true, true
	case deprecated.TimestampMicros:
		return arrow.Microsecond, true, true
	}
	return 0, false, false
}

func timeInfo(e *format.SchemaElement) (unit arrow.TimeUnit, ok bool) {
	if t, isTime := e.LogicalType.Value.(*format.TimeType); isTime {
		return arrowUnit(t.Unit)
	}
	if e.LogicalType.Value != nil || !e.ConvertedType.Valid {
		return 0, false
	}
	switch e.ConvertedType.V {
	case deprecated.TimeMillis:
		return arrow.Millisecond, true
	case deprecated.TimeMicros:
		return arrow.Microsecond, true
	}
	return 0, false
}

func isDate(e *format.SchemaElement) bool {
	if _, ok := e.LogicalType.Value.(*format.DateType); ok {
		return true
	}
	return e.LogicalType.Value == nil && e.ConvertedType.Valid && e.ConvertedType.V == deprecated.Date
}

// arrowType returns the Arrow type a column is read as. String columns
// come as utf8 here; the plan may turn them into dictionaries.
func (c *fileColumn) arrowType(exactDecimals bool) (arrow.DataType, error) {
	if c.nested != "" {
		return nil, fmt.Errorf("%s", c.nested)
	}
	e := &c.elem
	unsupported := func() (arrow.DataType, error) {
		t := e.Type.V.String()
		if lt := e.LogicalType.String(); lt != "" {
			t += " (" + lt + ")"
		} else if e.ConvertedType.Valid {
			t += fmt.Sprintf(" (converted type %d)", e.ConvertedType.V)
		}
		return nil, fmt.Errorf("unsupported type %s", t)
	}
	if scale, precision, ok := decimalInfo(e); ok {
		switch e.Type.V {
		case format.Int32, format.Int64, format.FixedLenByteArray, format.ByteArray:
		default:
			return unsupported()
		}
		if !exactDecimals {
			return arrow.PrimitiveTypes.Float64, nil
		}
		if precision < 1 || precision > 38 || scale < 0 || scale > precision {
			return nil, fmt.Errorf("unsupported DECIMAL(%d,%d) as Arrow decimal128 (read it as float64)", precision, scale)
		}
		return &arrow.Decimal128Type{Precision: precision, Scale: scale}, nil
	}
	switch e.Type.V {
	case format.Boolean:
		if e.LogicalType.Value != nil {
			return unsupported()
		}
		return arrow.FixedWidthTypes.Boolean, nil
	case format.Int32:
		if isDate(e) {
			return arrow.FixedWidthTypes.Date32, nil
		}
		if u, ok := timeInfo(e); ok {
			if u != arrow.Millisecond {
				return unsupported()
			}
			return arrow.FixedWidthTypes.Time32ms, nil
		}
		if bits, signed, ok := intInfo(e); ok {
			switch {
			case bits == 8 && signed:
				return arrow.PrimitiveTypes.Int8, nil
			case bits == 16 && signed:
				return arrow.PrimitiveTypes.Int16, nil
			case bits == 32 && signed:
				return arrow.PrimitiveTypes.Int32, nil
			case bits == 8:
				return arrow.PrimitiveTypes.Uint8, nil
			case bits == 16:
				return arrow.PrimitiveTypes.Uint16, nil
			case bits == 32:
				return arrow.PrimitiveTypes.Uint32, nil
			}
			return unsupported()
		}
		if e.LogicalType.Value != nil || e.ConvertedType.Valid {
			return unsupported()
		}
		return arrow.PrimitiveTypes.Int32, nil
	case format.Int64:
		if u, utc, ok := timestampInfo(e); ok {
			zone := ""
			if utc {
				zone = "UTC"
			}
			return &arrow.TimestampType{Unit: u, TimeZone: zone}, nil
		}
		if u, ok := timeInfo(e); ok {
			switch u {
			case arrow.Microsecond:
				return arrow.FixedWidthTypes.Time64us, nil
			case arrow.Nanosecond:
				return arrow.FixedWidthTypes.Time64ns, nil
			}
			return unsupported()
		}
		if bits, signed, ok := intInfo(e); ok {
			switch {
			case bits == 64 && signed:
				return arrow.PrimitiveTypes.Int64, nil
			case bits == 64:
				return arrow.PrimitiveTypes.Uint64, nil
			}
			return unsupported()
		}
		if e.LogicalType.Value != nil || e.ConvertedType.Valid {
			return unsupported()
		}
		return arrow.PrimitiveTypes.Int64, nil
	case format.Int96:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, nil
	case format.Float:
		if e.LogicalType.Value != nil {
			return unsupported()
		}
		return arrow.PrimitiveTypes.Float32, nil
	case format.Double:
		if e.LogicalType.Value != nil {
			return unsupported()
		}
		return arrow.PrimitiveTypes.Float64, nil
	case format.ByteArray:
		if isString(e) {
			return arrow.BinaryTypes.String, nil
		}
		switch e.LogicalType.Value.(type) {
		case nil, *format.BsonType:
			if e.LogicalType.Value == nil && e.ConvertedType.Valid && e.ConvertedType.V != deprecated.Bson {
				return unsupported()
			}
			return arrow.BinaryTypes.Binary, nil
		}
		return unsupported()
	case format.FixedLenByteArray:
		n := int(e.TypeLength.V)
		if !e.TypeLength.Valid || n <= 0 {
			return nil, fmt.Errorf("%w: FIXED_LEN_BYTE_ARRAY column without a length", ErrCorrupt)
		}
		switch e.LogicalType.Value.(type) {
		case nil, *format.UUIDType:
			if e.LogicalType.Value == nil && e.ConvertedType.Valid {
				return unsupported()
			}
			return &arrow.FixedSizeBinaryType{ByteWidth: n}, nil
		}
		return unsupported()
	}
	return unsupported()
}
