package cli

import (
	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/kafka"
)

// Builtins returns config.DefaultRegistry(): a new registry holding every
// component the agora command ships with, etl.Builtins() and the kafka,
// postgres and sqlite sources and sinks. Add components of your own to it
// and pass it to Main with WithRegistry.
func Builtins() *etl.Registry { return config.DefaultRegistry() }

// closeIdleComponents releases what components keep between runs, once the
// runs are over: the kafka source's consumer clients leave their groups,
// so the next worker to start gets the partitions at once rather than
// after the session timeout.
func closeIdleComponents() { kafka.CloseIdle() }
