package expr

import "time"

// DtExpr holds the date and time functions of an expression; get one with
// Expr.Dt. Parts are taken in the column's time zone (UTC for timestamps
// without one) and are int32.
type DtExpr struct{ e Expr }

// Dt gives access to the date and time functions of e, which must be a
// timestamp, date32 or date64 column.
func (e Expr) Dt() DtExpr { return DtExpr{e} }

// Year is the calendar year.
func (d DtExpr) Year() Expr { return newNode(opDtYear, d.e) }

// Month is the month, 1 to 12.
func (d DtExpr) Month() Expr { return newNode(opDtMonth, d.e) }

// Day is the day of the month, 1 to 31.
func (d DtExpr) Day() Expr { return newNode(opDtDay, d.e) }

// Hour is the hour, 0 to 23.
func (d DtExpr) Hour() Expr { return newNode(opDtHour, d.e) }

// Minute is the minute, 0 to 59.
func (d DtExpr) Minute() Expr { return newNode(opDtMinute, d.e) }

// Second is the second, 0 to 59 (fractions are dropped).
func (d DtExpr) Second() Expr { return newNode(opDtSecond, d.e) }

// Weekday is the day of the week, Monday=0 to Sunday=6 (as pandas).
func (d DtExpr) Weekday() Expr { return newNode(opDtWeekday, d.e) }

// DayOfYear is the day of the year, 1 to 366.
func (d DtExpr) DayOfYear() Expr { return newNode(opDtDayOfYear, d.e) }

// Date is the calendar date, as date32.
func (d DtExpr) Date() Expr { return newNode(opDtDate, d.e) }

// Truncate rounds down to the start of the period containing each value, on
// the column's wall clock. unit is "year", "quarter", "month", "week" (weeks
// start on Monday), "day", "hour", "minute", "second", or a time.Duration
// (periods counted from midnight of 1970-01-01 on the wall clock, so that
// 15*time.Minute gives quarter hours). Anything else is an error.
func (d DtExpr) Truncate(unit any) Expr {
	return newNode(opDtTruncate, d.e, Lit(unit))
}

// Add adds a fixed duration; it is the same as Expr.Add(dur).
func (d DtExpr) Add(dur time.Duration) Expr { return d.e.Add(dur) }

// AddMonths adds n calendar months, keeping the time of day; a day past the
// end of the new month becomes its last day (Jan 31 + 1 month = Feb 28/29).
func (d DtExpr) AddMonths(n int) Expr { return newNode(opDtAddMonths, d.e, Lit(n)) }
