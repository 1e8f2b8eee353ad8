// Package transform builds the transforms a record pipeline applies
// between its source and its sinks (etl.WithTransforms): Filter and Map
// evaluate CEL expressions (cel.dev/cel-go) over the record, bound as
// `record`, a map from field names to values, and the run's parameters,
// bound as `params`, a map from names to strings (ParamsVar); Drop, Keep
// and Rename change fields by name.
//
// It lives apart from package etl so that a program that uses no
// expression does not link the CEL interpreter.
//
// Values are passed to CEL as they are in the record: strings, booleans,
// int64 and float64 (a JSON number, json.Number, becomes an int when it
// has no fraction or exponent and fits in an int64, a uint when it fits
// in a uint64 only, else a double), []byte as bytes, time.Time as a
// timestamp, lists and maps. Numbers of different types compare as
// numbers (record.amount > 0 holds for a double amount of 2.5). The CEL
// string extensions (substring, split, lowerAscii, ...) are available.
// Results come back as record values, null as nil at any depth (see
// native); a map with a key that is not a string fails the record
// (ErrMapKey).
//
// Every evaluation is bounded: by a cost limit (WithMaxCost,
// DefaultMaxCost), checked from CEL's estimate when the expression is
// compiled and, where the estimate depends on the record, while it runs;
// and, for an expression with a comprehension, by the context Apply is
// given, whose end stops it.
package transform
