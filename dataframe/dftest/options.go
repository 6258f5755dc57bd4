package dftest

// Option changes how tables are compared.
type Option func(*options)

type options struct {
	tol            tolerance
	ignoreRowOrder bool
	ignoreColOrder bool
	checkTypes     bool
}

func newOptions(opts []Option) options {
	o := options{tol: tolerance{rel: 1e-9}, checkTypes: true}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Tolerance sets how close two floating-point values must be to count as
// equal: |got-want| <= max(rel*max(|got|, |want|), abs), as in Python's
// math.isclose. The default is rel 1e-9, abs 0. Tolerance(0, 0) asks for
// exact equality. NaN equals NaN whatever the tolerance. When either
// column is float32 (or float16), both values are first rounded to float32.
func Tolerance(rel, abs float64) Option {
	return func(o *options) { o.tol = tolerance{rel: rel, abs: abs} }
}

// IgnoreRowOrder compares the tables as multisets of rows: both are sorted
// by all their common columns (floating-point columns last) and then
// matched. The report lists the rows found only in got and only in want,
// with their original row numbers.
//
// Rows that differ only by floating-point noise within the tolerance still
// match, unless that noise decides their sort order among rows that agree
// on every other column.
func IgnoreRowOrder() Option {
	return func(o *options) { o.ignoreRowOrder = true }
}

// IgnoreColumnOrder matches columns by name only, so that the same columns
// in another order are equal.
func IgnoreColumnOrder() Option {
	return func(o *options) { o.ignoreColOrder = true }
}

// CheckTypes sets whether columns must have identical Arrow types (the
// default). With CheckTypes(false), values are compared across types of
// the same family: any integer or float with any other (as numbers),
// string, large string and dictionary-encoded strings, timestamps of any
// unit or time zone (as instants), date32 and date64, durations of any
// unit. Columns of different families (a string and an int64) always
// differ.
func CheckTypes(check bool) Option {
	return func(o *options) { o.checkTypes = check }
}
