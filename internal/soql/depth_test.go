package soql

import (
	"errors"
	"strings"
	"testing"
)

// TestNestingDepthBounded: every way an expression nests (parentheses,
// calls, NOT, signs, ^, CASE, index) is refused past MaxDepth with a
// syntax error saying "nested too deeply", and accepted at MaxDepth; a
// 16,000-character input of one kind is refused the same way, before the
// parser's recursion grows with it.
func TestNestingDepthBounded(t *testing.T) {
	t.Parallel()
	kinds := []struct {
		name       string
		open, shut string
	}{
		{"parentheses", "(", ")"},
		{"calls", "upper(", ")"},
		{"not", "NOT ", ""},
		{"minus", "- ", ""},
		{"power", "2 ^ ", ""},
		{"case", "CASE WHEN ", " THEN 1 END"},
		{"index", "a[", "]"},
	}
	nest := func(open, shut string, n int) string {
		return "SELECT x WHERE " + strings.Repeat(open, n) + "1" + strings.Repeat(shut, n)
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			// WHERE's expression is one level; n more make n+1.
			if _, err := Parse(nest(k.open, k.shut, MaxDepth/2)); err != nil {
				t.Errorf("Parse(%d levels of %s) = %v; want no error", MaxDepth/2, k.name, err)
			}
			for _, n := range []int{MaxDepth + 1, 16_000 / len(k.open)} {
				_, err := Parse(nest(k.open, k.shut, n))
				var se *SyntaxError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), "nested too deeply") {
					t.Errorf("Parse(%d levels of %s) = %v; want a *SyntaxError saying nested too deeply", n, k.name, err)
				}
			}
		})
	}
	if _, err := ParseExpr(strings.Repeat("(", 16_000) + "1"); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("ParseExpr(16,000 '(') = %v; want nested too deeply", err)
	}
	// Long flat chains are not nesting: they parse.
	if _, err := Parse("SELECT x WHERE " + strings.Repeat("1 + ", 2_000) + "1"); err != nil {
		t.Errorf("Parse(a chain of 2,000 +) = %v; want no error", err)
	}
}
