package soqlsqlite

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// The function tables agree with soql on which functions are aggregates.
func TestFunctionTablesAgreeWithSoQL(t *testing.T) {
	t.Parallel()
	for name := range aggregateFunctions {
		if !soql.IsAggregate(name) {
			t.Errorf("aggregateFunctions has %q; soql.IsAggregate(%q) = false", name, name)
		}
	}
	for name := range scalarFunctions {
		if soql.IsAggregate(name) {
			t.Errorf("scalarFunctions has %q; soql.IsAggregate(%q) = true", name, name)
		}
	}
}
