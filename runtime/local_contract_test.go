package runtime_test

import (
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/coordinatortest"
	"github.com/agora-etl/agora/runtime/history"
)

// wrappedCoord is the wrapper a user writes around a coordinator: embedding
// forwards every method, Capabilities included.
type wrappedCoord struct{ runtime.Coordinator }

// withHistory is a local coordinator keeping its runs in memory, as a
// worker binary's does.
func withHistory() *runtime.LocalCoordinator {
	return runtime.NewLocalCoordinator(nil, runtime.WithLocalRunHistory(history.New(history.Policy{})))
}

func TestLocalCoordinatorKeepsTheContract(t *testing.T) {
	coordinatortest.Run(t, func(*testing.T) runtime.Coordinator {
		return withHistory()
	}, coordinatortest.Alone(), coordinatortest.Unfenced())
}

// Without a run history the coordinator still keeps the contract; the
// cases of the history it lacks are skipped.
func TestLocalCoordinatorWithoutHistoryKeepsTheContract(t *testing.T) {
	coordinatortest.Run(t, func(*testing.T) runtime.Coordinator {
		return runtime.NewLocalCoordinator(nil)
	}, coordinatortest.Alone(), coordinatortest.Unfenced())
}

func TestWrappedLocalCoordinatorKeepsTheContract(t *testing.T) {
	coordinatortest.Run(t, func(*testing.T) runtime.Coordinator {
		return wrappedCoord{withHistory()}
	}, coordinatortest.Alone(), coordinatortest.Unfenced())
}

// The wrapper forwards the local coordinator's capabilities, all of them.
func TestWrappedLocalCoordinatorForwardsItsCapabilities(t *testing.T) {
	local := withHistory()
	if got, want := (wrappedCoord{local}).Capabilities(), local.Capabilities(); got != want {
		t.Fatalf("wrapped capabilities %+v, want the local coordinator's %+v", got, want)
	}
}
