package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// createIfMissing runs create, a CREATE ... IF NOT EXISTS, and runs it once
// more when it lost a race with another session creating the same table.
// IF NOT EXISTS only checks the catalog before inserting into it: two
// replicas' first runs on a new database both pass the check, and the
// second insert is refused by one of the catalog's unique indexes, as
// 23505 (unique_violation), 42P07 (duplicate_table) or 42710
// (duplicate_object: the table's row type of the same name). By then the
// winner has committed, so the second run finds the table and does
// nothing. A name held by something that is not the table (a type, a
// view) fails the second run too, and that error is returned: the race is
// retried, never assumed.
func createIfMissing(create func() error) error {
	err := create()
	if err != nil && lostCreateRace(err) {
		err = create()
	}
	return err
}

// lostCreateRace reports whether err is one of the catalog's refusals a
// concurrent CREATE ... IF NOT EXISTS of the same table produces.
func lostCreateRace(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "23505", "42P07", "42710":
		return true
	}
	return false
}
