package soql_test

import (
	"fmt"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

func Example() {
	q, err := soql.Parse("select applicant, status where status = 'APPROVED' order by applicant limit 100")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(q.WithStableOrder())
	fmt.Println(q.CountQuery())

	_, err = soql.Parse("SELECT WHERE status =")
	fmt.Println(err)
	// Output:
	// SELECT applicant, status WHERE status = 'APPROVED' ORDER BY applicant, :id LIMIT 100
	// SELECT applicant, status WHERE status = 'APPROVED' LIMIT 100 |> SELECT count(*) AS count
	// line 1, column 22: expected an expression, got end of input
}
