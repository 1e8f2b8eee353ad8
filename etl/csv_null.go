package etl

import "slices"

// checkNullIf validates a file source's null_if: CSV only, each value
// listed once.
func checkNullIf(format string, nullIf []string) error {
	if len(nullIf) == 0 {
		return nil
	}
	if format == FormatJSONL {
		return FieldErrorf("null_if", "is only used with CSV files, and format is %q (JSON lines write null themselves)", FormatJSONL)
	}
	for i, v := range nullIf {
		if slices.Contains(nullIf[:i], v) {
			return FieldErrorf("null_if", "%q is listed twice", v)
		}
	}
	return nil
}

// cellValue is a CSV cell as a record field: nil when it is one of
// nullIf, else the cell's text.
func cellValue(cell string, nullIf []string) any {
	for _, n := range nullIf {
		if cell == n {
			return nil
		}
	}
	return cell
}
