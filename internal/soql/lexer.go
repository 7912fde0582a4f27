package soql

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokenKind int

const (
	tokEOF     tokenKind = iota
	tokIdent             // bare identifier or system field (:id)
	tokQuoted            // `backtick identifier`
	tokKeyword           // reserved word; text is upper-case in tok.kw
	tokString            // '...' or "..."
	tokNumber            // 42, 4.2, 1e3
	tokOp                // operators and punctuation, including "|>" and ":*"
)

// token is one lexeme with its position.
type token struct {
	kind  tokenKind
	pos   Pos
	raw   string // exact source text
	kw    string // upper-case keyword for tokKeyword
	value string // decoded string value (tokString) or name (tokIdent, tokQuoted)
}

func (t token) end() int { return t.pos.Offset + len(t.raw) }

// describe renders the token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokKeyword:
		return t.kw
	}
	s := t.raw
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "..."
	}
	return s
}

// reserved lists the words that cannot be bare identifiers. CASE, WHEN,
// THEN, ELSE, END, NULLS, FIRST and LAST are recognised by context instead,
// so they stay usable as column names.
var reserved = map[string]bool{
	"SELECT": true, "DISTINCT": true, "AS": true, "WHERE": true, "GROUP": true,
	"BY": true, "HAVING": true, "ORDER": true, "SEARCH": true, "LIMIT": true,
	"OFFSET": true, "ASC": true, "DESC": true, "AND": true, "OR": true,
	"NOT": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true,
	"IN": true, "LIKE": true, "BETWEEN": true, "FROM": true,
}

// IsReserved reports whether word (any case) is a reserved SoQL keyword and so
// must be backtick-quoted to be used as an identifier.
func IsReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// lexer turns source text into tokens.
type lexer struct {
	src  string
	off  int
	line int
	col  int // 1-based byte column of off
}

func newLexer(src string) *lexer { return &lexer{src: src, line: 1, col: 1} }

func (l *lexer) pos() Pos { return Pos{Offset: l.off, Line: l.line, Column: l.col} }

// advance moves over n bytes, tracking lines.
func (l *lexer) advance(n int) {
	for i := 0; i < n && l.off < len(l.src); i++ {
		if l.src[l.off] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.off++
	}
}

func (l *lexer) errAt(p Pos, msg string) *SyntaxError { return &SyntaxError{Pos: p, Msg: msg} }

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
func isDigit(b byte) bool      { return b >= '0' && b <= '9' }

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() error {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.advance(1)
		case c == '-' && strings.HasPrefix(l.src[l.off:], "--"):
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.advance(1)
			}
		case c == '/' && strings.HasPrefix(l.src[l.off:], "/*"):
			start := l.pos()
			i := strings.Index(l.src[l.off+2:], "*/")
			if i < 0 {
				return l.errAt(start, "unterminated /* comment")
			}
			l.advance(i + 4)
		default:
			r, size := utf8.DecodeRuneInString(l.src[l.off:])
			if r != utf8.RuneError && unicode.IsSpace(r) {
				l.advance(size)
				continue
			}
			return nil
		}
	}
	return nil
}

// identEnd returns the offset just after the identifier characters starting at i.
func identEnd(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isIdentPart(r) {
			break
		}
		i += size
	}
	return i
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	start := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	s := l.src
	c := s[l.off]
	mk := func(kind tokenKind, n int) token {
		t := token{kind: kind, pos: start, raw: s[start.Offset : start.Offset+n]}
		l.advance(n)
		return t
	}
	switch {
	case c == '\'':
		return l.singleQuoted()
	case c == '"':
		return l.doubleQuoted()
	case c == '`':
		i := strings.IndexByte(s[l.off+1:], '`')
		if i < 0 {
			return token{}, l.errAt(start, "unterminated `quoted identifier`")
		}
		if i == 0 {
			return token{}, l.errAt(start, "empty `quoted identifier`")
		}
		t := mk(tokQuoted, i+2)
		t.value = t.raw[1 : len(t.raw)-1]
		return t, nil
	case isDigit(c) || (c == '.' && l.off+1 < len(s) && isDigit(s[l.off+1])):
		return l.number()
	case c == ':':
		if l.off+1 < len(s) {
			switch n := s[l.off+1]; {
			case n == ':':
				return mk(tokOp, 2), nil
			case n == '*':
				return mk(tokOp, 2), nil
			case n == '@':
				e := identEnd(s, l.off+2)
				if e == l.off+2 {
					return token{}, l.errAt(start, "expected a system field name after :@")
				}
				t := mk(tokIdent, e-l.off)
				t.value = t.raw
				return t, nil
			default:
				r, _ := utf8.DecodeRuneInString(s[l.off+1:])
				if isIdentStart(r) || isDigit(n) {
					e := identEnd(s, l.off+1)
					t := mk(tokIdent, e-l.off)
					t.value = t.raw
					return t, nil
				}
			}
		}
		return token{}, l.errAt(start, "unexpected ':' (system fields look like :id, casts like x::number)")
	}
	r, size := utf8.DecodeRuneInString(s[l.off:])
	if r == utf8.RuneError && size <= 1 {
		return token{}, l.errAt(start, "invalid UTF-8 in query text")
	}
	if isIdentStart(r) {
		e := identEnd(s, l.off)
		t := mk(tokIdent, e-l.off)
		t.value = t.raw
		if up := strings.ToUpper(t.raw); reserved[up] {
			t.kind = tokKeyword
			t.kw = up
		}
		return t, nil
	}
	for _, op := range [...]string{"|>", "||", "==", "!=", "<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "%", "^", ".", "[", "]", "(", ")", ","} {
		if strings.HasPrefix(s[l.off:], op) {
			return mk(tokOp, len(op)), nil
		}
	}
	return token{}, l.errAt(start, "unexpected character "+strconv.QuoteRune(r))
}

func (l *lexer) number() (token, error) {
	start := l.pos()
	s := l.src
	i := l.off
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	// A number running straight into identifier characters (12abc) is an error.
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		if isIdentPart(r) {
			e := identEnd(s, i)
			return token{}, l.errAt(start, "malformed number "+strconv.Quote(s[l.off:e]))
		}
	}
	t := token{kind: tokNumber, pos: start, raw: s[l.off:i]}
	l.advance(i - l.off)
	return t, nil
}

// singleQuoted lexes 'text' where ” stands for one quote.
func (l *lexer) singleQuoted() (token, error) {
	start := l.pos()
	s := l.src
	var b strings.Builder
	i := l.off + 1
	for {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return token{}, l.errAt(start, "unterminated string literal (missing closing ')")
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		break
	}
	t := token{kind: tokString, pos: start, raw: s[l.off:i], value: b.String()}
	l.advance(i - l.off)
	return t, nil
}

// doubleQuoted lexes "text" with backslash escapes.
func (l *lexer) doubleQuoted() (token, error) {
	start := l.pos()
	s := l.src
	var b strings.Builder
	i := l.off + 1
	for {
		if i >= len(s) {
			return token{}, l.errAt(start, `unterminated string literal (missing closing ")`)
		}
		c := s[i]
		if c == '"' {
			i++
			break
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return token{}, l.errAt(start, `unterminated string literal (missing closing ")`)
		}
		e := s[i+1]
		i += 2
		switch e {
		case '"', '\'', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			j := i
			for j < len(s) && j-i < max && isHex(s[j]) {
				j++
			}
			if j == i || (e == 'u' && j-i != 4) {
				return token{}, l.errAt(l.posAt(i-2), "invalid \\"+string(e)+" escape: expected hex digits")
			}
			v, _ := strconv.ParseUint(s[i:j], 16, 32)
			if v > unicode.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
				return token{}, l.errAt(l.posAt(i-2), "invalid \\"+string(e)+" escape: "+s[i:j]+" is not a Unicode code point")
			}
			b.WriteRune(rune(v))
			i = j
		default:
			return token{}, l.errAt(l.posAt(i-2), "invalid escape sequence \\"+string(e)+" in string literal")
		}
	}
	t := token{kind: tokString, pos: start, raw: s[l.off:i], value: b.String()}
	l.advance(i - l.off)
	return t, nil
}

// posAt computes the position of byte offset off (off >= l.off).
func (l *lexer) posAt(off int) Pos {
	p := l.pos()
	for i := l.off; i < off && i < len(l.src); i++ {
		if l.src[i] == '\n' {
			p.Line++
			p.Column = 1
		} else {
			p.Column++
		}
	}
	p.Offset = off
	return p
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
