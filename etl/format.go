package etl

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The file formats of the file source and sink.
const (
	// FormatJSONL is one JSON object a line.
	FormatJSONL = "jsonl"
	// FormatCSV is comma-separated values under a header row of field
	// names.
	FormatCSV = "csv"
)

// checkFormat validates a format key; "" (from the extension) is allowed.
func checkFormat(format string) error {
	switch format {
	case "", FormatJSONL, FormatCSV:
		return nil
	}
	return FieldErrorf("format", "%q is not a format; use %q or %q", format, FormatJSONL, FormatCSV)
}

// formatOf returns format, or the one path's extension names: .jsonl,
// .ndjson and .json are jsonl, .csv is csv.
func formatOf(format, path string) (string, error) {
	if format != "" {
		return format, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson", ".json":
		return FormatJSONL, nil
	case ".csv":
		return FormatCSV, nil
	}
	return "", fmt.Errorf("cannot tell the format of %s from its extension; set format = %q or %q", path, FormatJSONL, FormatCSV)
}

// csvCell renders a field value as a CSV cell: strings as they are, nil as
// an empty cell, numbers and booleans as JSON writes them, times in RFC 3339,
// anything else (objects, arrays) as JSON.
func csvCell(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case []byte:
		return string(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
