package sampledata

import (
	"bytes"
	_ "embed" // the built-in catalog
	"io"
)

// catalogGz is DataSF's catalog of 630 datasets with the signals the live
// Discovery API gives for each (tags, category, page views, downloads):
// the fixture catalog/datasf-catalog-630-with-signals.jsonl of the
// project's shared fixtures, gzip-compressed. testdata/SOURCES.md names
// where each field comes from. DataSF's metadata is public domain
// (ODC-PDDL).
//
//go:embed datasf-catalog.jsonl.gz
var catalogGz []byte

// CatalogName names the built-in catalog in logs and errors.
const CatalogName = "built-in DataSF catalog (630 datasets)"

// Catalog returns the built-in DataSF catalog: gzip-compressed JSONL, one
// dataset a line, in the form localportal's LoadCatalog reads.
func Catalog() io.Reader { return bytes.NewReader(catalogGz) }
