package main

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every error code and type that nextStep compares with is one the tools
// send: package datasf (or socrata, for the portal's own codes it passes
// on) spells each one as a string literal in its code. A code renamed there would otherwise leave a person without the
// hint, with no test failing.
func TestNextStepCodesAreSent(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "toolcmd.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "nextStep" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			be, ok := n.(*ast.BinaryExpr)
			if !ok || be.Op != token.EQL {
				return true
			}
			sel, ok := be.X.(*ast.SelectorExpr)
			lit, isLit := be.Y.(*ast.BasicLit)
			if ok && isLit && (sel.Sel.Name == "code" || sel.Sel.Name == "errorType" || sel.Sel.Name == "tool") {
				w, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				words = append(words, w)
			}
			return true
		})
		return false
	})
	if len(words) < 10 {
		t.Fatalf("found %d codes compared in nextStep; want the dozen or more it has", len(words))
	}
	var src strings.Builder
	var files []string
	for _, pkg := range []string{"datasf", "socrata"} { // socrata: the portal's own codes, passed on
		names, err := filepath.Glob(filepath.Join("..", "..", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, names...)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, w := range words {
		if !strings.Contains(src.String(), strconv.Quote(w)) {
			t.Errorf("nextStep compares with %q, which neither datasf nor socrata spells", w)
		}
	}
}
