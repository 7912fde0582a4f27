package soql

import "strings"

// Names returns what a spelling corrector needs of q: the names of the
// column references of q's first stage as written (unquoted), in source
// order, one per reference (see ColumnRefs), and the aliases that stage
// defines (SELECT x AS alias).
func (q *Query) Names() (refs, aliases []string) {
	for _, ref := range q.ColumnRefs() {
		refs = append(refs, ref.Name)
	}
	if len(q.Stages) > 0 {
		for _, it := range q.Stages[0].Selection {
			if it.Alias != nil {
				aliases = append(aliases, it.Alias.Name)
			}
		}
	}
	return refs, aliases
}

// Rename renames the column references of q's first stage (those
// ColumnRefs returns) whose name, as written, is a key of to, and returns
// src (the text q was parsed from) with the same references spelt as their
// new names (see Spell): every other byte of src is kept, so the text reads
// as the user wrote it. (Printing the renamed tree would not do: String
// prints canonical SoQL, with upper-case keywords and no comments.) Each
// renamed reference keeps its Raw text and position, which still point
// into src, and is quoted when the new name cannot be written bare.
func (q *Query) Rename(src string, to map[string]string) string {
	if len(to) == 0 {
		return src
	}
	var b strings.Builder
	last := 0
	for _, ref := range q.ColumnRefs() { // in source order
		name, ok := to[ref.Name]
		if !ok {
			continue
		}
		start := ref.NamePos.Offset
		b.WriteString(src[last:start])
		b.WriteString(Spell(name, ref.Quoted))
		last = start + len(ref.Raw)
		ref.Name = name
		if !bare(name) {
			ref.Quoted = true
		}
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
