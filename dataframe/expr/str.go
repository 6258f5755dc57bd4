package expr

// StrExpr holds the string functions of an expression; get one with
// Expr.Str. Positions and lengths count characters (Unicode code points),
// not bytes.
type StrExpr struct{ e Expr }

// Str gives access to the string functions of e, which must be a string
// column (utf8, large_utf8 or dictionary-encoded).
func (e Expr) Str() StrExpr { return StrExpr{e} }

// Contains is true where the string contains sub.
func (s StrExpr) Contains(sub string) Expr { return newNode(opStrContains, s.e, Lit(sub)) }

// StartsWith is true where the string starts with prefix.
func (s StrExpr) StartsWith(prefix string) Expr { return newNode(opStrStartsWith, s.e, Lit(prefix)) }

// EndsWith is true where the string ends with suffix.
func (s StrExpr) EndsWith(suffix string) Expr { return newNode(opStrEndsWith, s.e, Lit(suffix)) }

// Lower converts to lower case.
func (s StrExpr) Lower() Expr { return newNode(opStrLower, s.e) }

// Upper converts to upper case.
func (s StrExpr) Upper() Expr { return newNode(opStrUpper, s.e) }

// Len is the number of characters, as int64.
func (s StrExpr) Len() Expr { return newNode(opStrLen, s.e) }

// Replace replaces every occurrence of old by new.
func (s StrExpr) Replace(old, new string) Expr {
	return newNode(opStrReplace, s.e, Lit(old), Lit(new))
}

// Slice takes length characters from position start (0-based). A negative
// start counts from the end (-1 is the last character); a negative length
// takes everything to the end. Positions beyond the string give "".
func (s StrExpr) Slice(start, length int) Expr {
	return newNode(opStrSlice, s.e, Lit(start), Lit(length))
}

// Strip removes leading and trailing white space.
func (s StrExpr) Strip() Expr { return newNode(opStrStrip, s.e) }
