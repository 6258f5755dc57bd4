package expr

import "fmt"

// WhenThen builds a conditional expression:
//
//	When(c1).Then(v1).When(c2).Then(v2).Otherwise(v3)
//
// gives v1 where c1 is true, else v2 where c2 is true, else v3. A null
// condition counts as false. Without Otherwise (use Expr to finish) the
// remaining rows are null. A WhenThen is immutable: each method returns a new
// one, so a prefix can be shared.
type WhenThen struct {
	args    []Expr // condition, value pairs; a pending condition last
	pending bool   // the last arg is a condition waiting for Then
	err     error
}

// When starts a conditional expression; cond is an Expr or a literal.
func When(cond any) *WhenThen {
	return &WhenThen{args: []Expr{toExpr(cond)}, pending: true}
}

func (w *WhenThen) with(x Expr, pending bool, err error) *WhenThen {
	args := make([]Expr, len(w.args), len(w.args)+1)
	copy(args, w.args)
	if w.err != nil {
		err = w.err
	}
	return &WhenThen{args: append(args, x), pending: pending, err: err}
}

// Then gives the value where the last condition holds.
func (w *WhenThen) Then(v any) *WhenThen {
	var err error
	if !w.pending {
		err = fmt.Errorf("when: Then(%s) follows another Then; call When first", toExpr(v))
	}
	return w.with(toExpr(v), false, err)
}

// When adds another condition, tried when the previous ones do not hold.
func (w *WhenThen) When(cond any) *WhenThen {
	var err error
	if w.pending {
		err = fmt.Errorf("when: When(%s) follows a When without Then", toExpr(cond))
	}
	return w.with(toExpr(cond), true, err)
}

// Otherwise gives the value where no condition holds and finishes the
// expression.
func (w *WhenThen) Otherwise(v any) Expr {
	var err error
	if w.pending {
		err = fmt.Errorf("when: Otherwise(%s) follows a When without Then", toExpr(v))
	}
	return w.with(toExpr(v), false, err).build()
}

// Expr finishes the expression with null where no condition holds.
func (w *WhenThen) Expr() Expr {
	if w.pending {
		return w.with(Lit(nil), false, fmt.Errorf("when: expression ends with a When without Then")).build()
	}
	return w.with(Lit(nil), false, nil).build()
}

func (w *WhenThen) build() Expr {
	n := &node{op: opWhen, args: w.args}
	n.finish()
	if n.err == nil && w.err != nil {
		n.err = w.err
	}
	return Expr{n}
}
