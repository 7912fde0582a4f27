package datasf

// Names the external tests (package datasf_test) use.
const CodeDomainRefused = codeDomainRefused

// AppHTML is the result viewer app's HTML, as resources/read sends it.
func AppHTML() string { return appHTML }
