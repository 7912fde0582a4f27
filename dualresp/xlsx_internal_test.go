package dualresp

// SetXLSXSheetRows sets the rows of x's sheets, the header included, for
// tests that fill several sheets without a million rows.
func SetXLSXSheetRows(x *XLSXWriter, n int) { x.sheetRows = n }
