package runtime_test

import (
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/coordinatortest"
)

// wrappedCoord is the wrapper a user writes around a coordinator: embedding
// forwards every method, Capabilities included.
type wrappedCoord struct{ runtime.Coordinator }

func TestLocalCoordinatorKeepsTheContract(t *testing.T) {
	coordinatortest.Run(t, func(*testing.T) runtime.Coordinator {
		return runtime.NewLocalCoordinator(nil)
	}, coordinatortest.Alone(), coordinatortest.Unfenced())
}

func TestWrappedLocalCoordinatorKeepsTheContract(t *testing.T) {
	coordinatortest.Run(t, func(*testing.T) runtime.Coordinator {
		return wrappedCoord{runtime.NewLocalCoordinator(nil)}
	}, coordinatortest.Alone(), coordinatortest.Unfenced())
}

// The wrapper forwards the local coordinator's capabilities, all of them.
func TestWrappedLocalCoordinatorForwardsItsCapabilities(t *testing.T) {
	local := runtime.NewLocalCoordinator(nil)
	if got, want := (wrappedCoord{local}).Capabilities(), local.Capabilities(); got != want {
		t.Fatalf("wrapped capabilities %+v, want the local coordinator's %+v", got, want)
	}
}
