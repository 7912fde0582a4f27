package validate_test

import (
	"encoding/json"
	"fmt"

	"github.com/datasf-mcp/datasf-mcp/validate"
)

// countInput is a tool's arguments: the tags state each rule once, for both
// the check and the published schema.
type countInput struct {
	DatasetID string `json:"dataset_id" validate:"required,fourbyfour" jsonschema:"The dataset's id."`
	Where     string `json:"where,omitempty" validate:"omitempty,cleansoql,min=1,max=500"`
}

func Example() {
	err := validate.Struct(countInput{DatasetID: "ABC", Where: "x\x00"})
	fmt.Println(err)

	in := countInput{DatasetID: " https://data.sfgov.org/d/WG3W-H783 "}
	fmt.Println(validate.Struct(in), validate.NormalizeDatasetID(in.DatasetID))

	schema, _ := validate.Schema[countInput]()
	b, _ := json.Marshal(schema.Properties["where"])
	fmt.Println(string(b))
	// Output:
	// dataset_id must be a dataset id like abcd-1234 (4 letters or digits, a hyphen, 4 more) or the dataset's URL; got "ABC"; where must not contain control characters; found U+0000 at byte 1
	// <nil> wg3w-h783
	// {"type":"string","minLength":1,"maxLength":500}
}
