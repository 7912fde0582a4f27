package analyze

import (
	"fmt"
	"strings"
)

// forbidden are the keywords a query may not contain outside literals and
// quoted identifiers.
var forbidden = map[string]bool{
	"ATTACH": true, "DETACH": true, "PRAGMA": true, "INSERT": true, "UPDATE": true,
	"DELETE": true, "DROP": true, "CREATE": true, "ALTER": true, "REPLACE": true,
	"VACUUM": true, "REINDEX": true, "ANALYZE": true, "BEGIN": true, "COMMIT": true,
	"ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "LOAD_EXTENSION": true,
}

// CheckSQL reports whether sql is a single SELECT (or WITH … SELECT)
// statement without a write or administrative keyword. It is a light check
// on the text, with comments, string literals and quoted identifiers
// removed; Run also enforces read-only access in SQLite itself. The error
// wraps ErrNotReadOnly and ErrInvalid.
func CheckSQL(sql string) error {
	clean, err := stripSQL(sql)
	if err != nil {
		return notReadOnly("%v", err)
	}
	clean = strings.TrimSpace(clean)
	for strings.HasSuffix(clean, ";") {
		clean = strings.TrimSpace(strings.TrimSuffix(clean, ";"))
	}
	if clean == "" {
		return notReadOnly("the SQL is empty")
	}
	if err := checkDepth(clean); err != nil {
		return err
	}
	if i := strings.IndexByte(clean, ';'); i >= 0 {
		return notReadOnly("only one statement is allowed, but there is more after the ';' at %q", excerpt(clean, i))
	}
	words := sqlWords(clean)
	if len(words) == 0 || (words[0].upper != "SELECT" && words[0].upper != "WITH") {
		first := ""
		if len(words) > 0 {
			first = words[0].upper
		}
		return notReadOnly("the statement must start with SELECT or WITH, not %q", first)
	}
	for _, w := range words {
		if !forbidden[w.upper] {
			continue
		}
		if w.upper == "REPLACE" && strings.HasPrefix(strings.TrimLeft(clean[w.end:], " \t\r\n"), "(") {
			continue // the replace() function
		}
		return notReadOnly("%s is not allowed; only read-only SELECT queries run here", w.upper)
	}
	return nil
}

// MaxSQLDepth is how deeply parentheses may nest in an analysis's SQL
// (subqueries, calls, grouping): deeper SQL is refused before SQLite parses
// it, so a statement of thousands of '(' costs nothing to answer.
const MaxSQLDepth = 100

// checkDepth refuses SQL (comments and literals stripped) whose
// parentheses nest deeper than MaxSQLDepth.
func checkDepth(clean string) error {
	depth := 0
	for i := 0; i < len(clean); i++ {
		switch clean[i] {
		case '(':
			if depth++; depth > MaxSQLDepth {
				return fmt.Errorf("%w: the SQL is nested too deeply: more than %d levels of parentheses at %q; write it with fewer levels (a WITH clause names a subquery once)",
					ErrInvalid, MaxSQLDepth, excerpt(clean, i))
			}
		case ')':
			depth--
		}
	}
	return nil
}

func notReadOnly(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrInvalid, ErrNotReadOnly, fmt.Sprintf(format, args...))
}

func excerpt(s string, i int) string {
	end := min(len(s), i+30)
	return s[i:end]
}

// stripSQL replaces comments by a space, string literals by ” and quoted
// identifiers by q.
func stripSQL(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
			} else {
				i += j
			}
			b.WriteByte(' ')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return "", fmt.Errorf("unterminated /* comment")
			}
			i += 2 + j + 2
			b.WriteByte(' ')
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], closer)
				if k < 0 {
					return "", fmt.Errorf("unterminated quote %c starting at %q", c, excerpt(s, i))
				}
				j += k + 1
				// A doubled quote is an escaped quote (not for [ ]).
				if c != '[' && j < len(s) && s[j] == closer {
					j++
					continue
				}
				break
			}
			if c == '\'' {
				b.WriteString(" '' ")
			} else {
				b.WriteString(" q ")
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

type sqlWord struct {
	upper string
	end   int
}

// sqlWords returns the identifier-like words of s.
func sqlWords(s string) []sqlWord {
	var out []sqlWord
	for i := 0; i < len(s); {
		if !isWordStart(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		// Skip words that are part of a number such as 1e5.
		if i == 0 || !isDigit(s[i-1]) {
			out = append(out, sqlWord{upper: strings.ToUpper(s[i:j]), end: j})
		}
		i = j
	}
	return out
}

func isWordStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isWordByte(c byte) bool { return isWordStart(c) || isDigit(c) || c == '$' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
