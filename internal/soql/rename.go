package soql

import (
	"cmp"
	"slices"
	"strings"
)

// RenameColumns renames the column references of q's first stage (those
// ColumnRefs returns) whose name, as written, is a key of to. Each renamed
// reference keeps its Raw text and position (they still point into the
// source), and is quoted when the new name cannot be written bare (see
// Spell).
func (q *Query) RenameColumns(to map[string]string) {
	if len(to) == 0 {
		return
	}
	for _, ref := range q.ColumnRefs() {
		if name, ok := to[ref.Name]; ok {
			ref.Name = name
			if !bare(name) {
				ref.Quoted = true
			}
		}
	}
}

// RenameInSource returns src (the text q was parsed from) with the column
// references of q's first stage whose name is a key of to spelt as the new
// name (see Spell); every other byte of src is kept. Call it before
// RenameColumns: it reads the names as written.
func (q *Query) RenameInSource(src string, to map[string]string) string {
	var refs []*Ident
	for _, ref := range q.ColumnRefs() {
		if _, ok := to[ref.Name]; ok {
			refs = append(refs, ref)
		}
	}
	if len(refs) == 0 {
		return src
	}
	slices.SortFunc(refs, func(a, b *Ident) int { return cmp.Compare(a.NamePos.Offset, b.NamePos.Offset) })
	var b strings.Builder
	b.Grow(len(src) + 16*len(refs))
	last := 0
	for _, ref := range refs {
		start := ref.NamePos.Offset
		b.WriteString(src[last:start])
		b.WriteString(Spell(to[ref.Name], ref.Quoted))
		last = start + len(ref.Raw)
	}
	b.WriteString(src[last:])
	return b.String()
}

// Spell writes a column name as an identifier: bare when it can be, else
// backtick-quoted (and always quoted when quoted is true, as when the
// reference it replaces was).
func Spell(name string, quoted bool) string {
	if !quoted && bare(name) {
		return name
	}
	return "`" + name + "`"
}

// contextual are words that the parser reads as keywords in some places
// (CASE … END, NULLS FIRST); a rename never writes them bare.
var contextual = map[string]bool{"case": true, "when": true, "then": true, "else": true, "end": true, "nulls": true, "first": true, "last": true}

// bare reports whether a renamed column can be written as a bare
// identifier: ASCII letters, digits and '_', not starting with a digit,
// neither reserved nor contextual.
func bare(name string) bool {
	if name == "" || IsReserved(name) || contextual[strings.ToLower(name)] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
