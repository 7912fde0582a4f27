package soql

// Pos is a position in the source text: byte Offset (0-based), Line and
// Column (1-based, column counted in bytes).
type Pos struct{ Offset, Line, Column int }

// Query is a |> chain of stages; len(Stages) >= 1. Stage 0 reads the dataset;
// stage i>0 reads the output of stage i-1.
type Query struct{ Stages []*Select }

// Select is one stage of a query: the clauses of a single SoQL statement.
type Select struct {
	SelectPos Pos           // position of the SELECT keyword, zero if the stage had no SELECT clause
	Distinct  bool          // SELECT DISTINCT
	Selection []*SelectItem // nil/empty: no SELECT clause (all columns)
	Where     Expr          // nil when absent
	GroupBy   []Expr        // GROUP BY keys
	Having    Expr          // nil when absent
	OrderBy   []*OrderItem  // ORDER BY items
	Search    *string       // SEARCH 'text'; nil when absent
	Limit     *int64        // LIMIT n; nil when absent
	Offset    *int64        // OFFSET n; nil when absent
}

// StarKind tells whether a select item is a star.
type StarKind int

// Star kinds of a SelectItem.
const (
	NoStar     StarKind = iota // an expression
	AllStar                    // * (every user column)
	SystemStar                 // :* (every system column)
)

// SelectItem is one entry of a SELECT list.
type SelectItem struct {
	Star  StarKind // when not NoStar, Expr is nil
	Expr  Expr
	Alias *Ident // nil when there is no AS alias
}

// NullsOrder is the NULLS FIRST / NULLS LAST option of an ORDER BY item.
type NullsOrder int

// Null orderings of an OrderItem.
const (
	NullsDefault NullsOrder = iota // not written
	NullsFirst                     // NULLS FIRST
	NullsLast                      // NULLS LAST
)

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// Expr is any expression node. Pos is where it starts; End is the byte
// offset just after it.
type Expr interface {
	Pos() Pos
	End() int
}

// Ident is a column reference, an alias, a function or type name, or a
// system field.
type Ident struct {
	NamePos Pos
	Name    string // unquoted name, e.g. "applicant", ":id", ":@computed_region_xyz"
	Raw     string // exact source text, e.g. "`my col`" or "Applicant"
	Quoted  bool   // backtick-quoted
}

// System reports whether the identifier names a system field (starts with ':').
func (i *Ident) System() bool { return len(i.Name) > 0 && i.Name[0] == ':' }

// StringLit is a string literal: 'a”b' or "a\"b".
type StringLit struct {
	LitPos Pos
	Value  string // decoded value
	Raw    string // exact source text
}

// NumberLit is a numeric literal such as 42, 4.2 or 1e3.
type NumberLit struct {
	LitPos Pos
	Raw    string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	LitPos Pos
	Value  bool
}

// NullLit is NULL.
type NullLit struct{ LitPos Pos }

// Call is a function call: count(*), count(DISTINCT x), upper(x), case(c1, v1, ...).
type Call struct {
	Name     *Ident // function name (not a column reference)
	Args     []Expr
	Star     bool // count(*)
	Distinct bool // count(DISTINCT x)
	Rparen   int  // byte offset just after ')'
}

// Binary is a binary operation. Op is canonical and lower-case: "or", "and",
// "=", "!=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "^", "||".
// The source spelling "==" is stored as "=".
type Binary struct {
	Op          string
	OpPos       Pos
	Left, Right Expr
}

// Unary is a prefix operation: "not", "-" or "+".
type Unary struct {
	Op    string
	OpPos Pos
	X     Expr
}

// In is x [NOT] IN (list...).
type In struct {
	X      Expr
	Not    bool
	List   []Expr
	Rparen int // byte offset just after ')'
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// Like is x [NOT] LIKE pattern.
type Like struct {
	X, Pattern Expr
	Not        bool
}

// IsNull is x IS [NOT] NULL.
type IsNull struct {
	X      Expr
	Not    bool
	EndOff int // byte offset just after NULL
}

// Cast is x::type, or the SQL form CAST(x AS type) when SQLStyle is set.
type Cast struct {
	X    Expr
	Type *Ident

	SQLStyle bool // written CAST(x AS type)
	CastPos  Pos  // position of CAST when SQLStyle
	Rparen   int  // byte offset just after ')' when SQLStyle
}

// Paren is a parenthesized expression, kept so that printing preserves the
// user's grouping.
type Paren struct {
	Lparen Pos
	X      Expr
	Rparen int // byte offset just after ')'
}

// Index is a subscript: a[2*b].
type Index struct {
	X, Index Expr
	Rbrack   int // byte offset just after ']'
}

// Dot is a field dereference: location.latitude.
type Dot struct {
	X     Expr
	Field *Ident
}

// Case is CASE WHEN c THEN v ... [ELSE e] END.
type Case struct {
	CasePos Pos
	Whens   []When
	Else    Expr // nil when absent
	EndOff  int  // byte offset just after END
}

// When is one WHEN c THEN v arm of a Case.
type When struct{ Cond, Value Expr }

func (e *Ident) Pos() Pos     { return e.NamePos }
func (e *StringLit) Pos() Pos { return e.LitPos }
func (e *NumberLit) Pos() Pos { return e.LitPos }
func (e *BoolLit) Pos() Pos   { return e.LitPos }
func (e *NullLit) Pos() Pos   { return e.LitPos }
func (e *Call) Pos() Pos      { return e.Name.NamePos }
func (e *Binary) Pos() Pos    { return e.Left.Pos() }
func (e *Unary) Pos() Pos     { return e.OpPos }
func (e *In) Pos() Pos        { return e.X.Pos() }
func (e *Between) Pos() Pos   { return e.X.Pos() }
func (e *Like) Pos() Pos      { return e.X.Pos() }
func (e *IsNull) Pos() Pos    { return e.X.Pos() }
func (e *Cast) Pos() Pos {
	if e.SQLStyle {
		return e.CastPos
	}
	return e.X.Pos()
}
func (e *Paren) Pos() Pos { return e.Lparen }
func (e *Index) Pos() Pos { return e.X.Pos() }
func (e *Dot) Pos() Pos   { return e.X.Pos() }
func (e *Case) Pos() Pos  { return e.CasePos }

func (e *Ident) End() int     { return e.NamePos.Offset + len(e.Raw) }
func (e *StringLit) End() int { return e.LitPos.Offset + len(e.Raw) }
func (e *NumberLit) End() int { return e.LitPos.Offset + len(e.Raw) }
func (e *BoolLit) End() int {
	if e.Value {
		return e.LitPos.Offset + len("true")
	}
	return e.LitPos.Offset + len("false")
}
func (e *NullLit) End() int { return e.LitPos.Offset + len("null") }
func (e *Call) End() int    { return e.Rparen }
func (e *Binary) End() int  { return e.Right.End() }
func (e *Unary) End() int   { return e.X.End() }
func (e *In) End() int      { return e.Rparen }
func (e *Between) End() int { return e.Hi.End() }
func (e *Like) End() int    { return e.Pattern.End() }
func (e *IsNull) End() int  { return e.EndOff }
func (e *Cast) End() int {
	if e.SQLStyle {
		return e.Rparen
	}
	return e.Type.End()
}
func (e *Paren) End() int { return e.Rparen }
func (e *Index) End() int { return e.Rbrack }
func (e *Dot) End() int   { return e.Field.End() }
func (e *Case) End() int  { return e.EndOff }

// Walk traverses e in pre-order, calling fn for each node. When fn returns
// false the children of that node are skipped. A Call's Name, a Cast's Type
// and a Dot's Field are not visited: they are not expressions.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch n := e.(type) {
	case *Call:
		for _, a := range n.Args {
			Walk(a, fn)
		}
	case *Binary:
		Walk(n.Left, fn)
		Walk(n.Right, fn)
	case *Unary:
		Walk(n.X, fn)
	case *In:
		Walk(n.X, fn)
		for _, a := range n.List {
			Walk(a, fn)
		}
	case *Between:
		Walk(n.X, fn)
		Walk(n.Lo, fn)
		Walk(n.Hi, fn)
	case *Like:
		Walk(n.X, fn)
		Walk(n.Pattern, fn)
	case *IsNull:
		Walk(n.X, fn)
	case *Cast:
		Walk(n.X, fn)
	case *Paren:
		Walk(n.X, fn)
	case *Index:
		Walk(n.X, fn)
		Walk(n.Index, fn)
	case *Dot:
		Walk(n.X, fn)
	case *Case:
		for _, w := range n.Whens {
			Walk(w.Cond, fn)
			Walk(w.Value, fn)
		}
		Walk(n.Else, fn)
	}
}
