package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// ColumnNotFoundError reports an expression that refers to a column the
// table does not have.
type ColumnNotFoundError struct {
	Name      string   // the missing column
	Expr      string   // the expression that refers to it
	Available []string // the table's columns
	Suggest   string   // the closest existing name, or ""
}

func (e *ColumnNotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "column %q not found", e.Name)
	if e.Expr != "" && e.Expr != "col("+strconv.Quote(e.Name)+")" {
		fmt.Fprintf(&b, " in %s", e.Expr)
	}
	if e.Suggest != "" {
		fmt.Fprintf(&b, "; did you mean %q?", e.Suggest)
	}
	if len(e.Available) == 0 {
		b.WriteString(" (the table has no columns)")
		return b.String()
	}
	b.WriteString(" (columns: ")
	const maxList = 40
	for i, c := range e.Available {
		if i == maxList {
			fmt.Fprintf(&b, ", ... %d more", len(e.Available)-maxList)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(c))
	}
	b.WriteString(")")
	return b.String()
}

// TypeError reports operands whose types an operation does not accept, such
// as adding a string to a number.
type TypeError struct {
	Expr     string           // the expression, as String gives it
	Msg      string           // what is wrong, such as "cannot add utf8 to float64"
	Operands []string         // the operands involved
	Types    []arrow.DataType // their types
}

func (e *TypeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	b.WriteString(" in ")
	b.WriteString(e.Expr)
	var parts []string
	for i, o := range e.Operands {
		if i < len(e.Types) && e.Types[i] != nil {
			parts = append(parts, o+" is "+typeName(e.Types[i]))
		}
	}
	if len(parts) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(parts, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// LiteralError reports a Go value Lit cannot turn into a constant.
type LiteralError struct {
	Value any
}

func (e *LiteralError) Error() string {
	return fmt.Sprintf("unsupported literal %#v of type %T: use nil, bool, an integer or float, string, time.Time, time.Duration or expr.Date", e.Value, e.Value)
}
