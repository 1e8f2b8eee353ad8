// Package customagora shows a Go program adding a component of its own to
// agora's config-only worker: a "sequence" source that counts.
//
// Register adds it to a registry; handed to the agora command's entry
// point, that registry makes a binary that runs agora/v1 files using
// `type = "sequence"` beside every built-in component:
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/agora-etl/agora/cli"
//		"github.com/agora-etl/agora/etl"
//		customagora "github.com/agora-etl/agora/examples/custom-agora"
//	)
//
//	func main() {
//		r := etl.Builtins()
//		customagora.Register(r)
//		os.Exit(cli.Main(os.Args[1:], cli.WithRegistry(r)))
//	}
//
// and pipelines.toml:
//
//	format = "agora/v1"
//
//	[pipelines.count.source]
//	type = "sequence"
//	count = 3
//	field = "n"
//
//	[pipelines.count.schedule]
//	mode = "once"
//
//	[[pipelines.count.sinks]]
//	type = "stdout"
package customagora
