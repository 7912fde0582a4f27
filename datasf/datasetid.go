package datasf

import "github.com/datasf-mcp/datasf-mcp/validate"

// Dataset ids arrive as models write them: in any case, with white space
// around them, or as the dataset's URL (see validate.DatasetIDPattern). The
// tools that take a dataset_id normalize it to the bare lower-case id after
// validation, so handlers, stored results and metadata only ever see
// "wg3w-h783".

// normalizer is an input whose arguments have a canonical form.
type normalizer interface{ normalize() }

func (in *SchemaInput) normalize() { in.DatasetID = validate.NormalizeDatasetID(in.DatasetID) }

func (in *QueryInput) normalize() { in.DatasetID = validate.NormalizeDatasetID(in.DatasetID) }
