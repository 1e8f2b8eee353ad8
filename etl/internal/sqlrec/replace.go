package sqlrec

import (
	"fmt"
	"strings"
	"time"

	"github.com/agora-etl/agora/etl"
)

// SlotStartTime is the value replace mode writes to the slot column: the slot's
// scheduled start, in UTC (the :slot_time of the run's source queries).
func SlotStartTime(slot int64) time.Time { return time.Unix(slot, 0).UTC() }

// NeedSlot is the error of a replace-mode sink asked to write, or
// complete, for a run that is not a fenced slot run: without a slot there
// is nothing to write to the slot column nor to replace. db prefixes it.
func NeedSlot(db, table string, unfenced bool) error {
	why := "this run is not one (a continuous, once or triggered run)"
	if unfenced {
		why = "this run holds no fenced lease, so the slot ledger cannot tell its first write of the slot (allow_unfenced does not help here)"
	}
	return fmt.Errorf("%s: table %s: mode = %q needs a slot run (a cron or every run holding a fenced lease): %s", db, table, ModeReplace, why)
}

// CheckSlotField returns an error naming the first of records with a field
// named col (fold: matched without regard to case, as SQLite matches
// columns), or nil: replace mode writes the slot time to col itself and
// never overwrites a record's value.
func CheckSlotField(db, table string, records []etl.Record, col string, fold bool) error {
	for i, r := range records {
		for f := range r {
			if f == col || fold && strings.EqualFold(f, col) {
				return fmt.Errorf("%s: table %s: record %d of the batch has a field %q, which is the sink's slot_column: mode = %q writes the run's slot time there and does not overwrite a record's value; drop or rename the field", db, table, i+1, f, ModeReplace)
			}
		}
	}
	return nil
}
