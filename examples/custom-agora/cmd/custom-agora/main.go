// Command custom-agora is the agora command with one more component: the
// "sequence" source of package customagora.
//
//	go run ./examples/custom-agora/cmd/custom-agora run --config examples/custom-agora/pipelines.toml
package main

import (
	"os"

	"github.com/agora-etl/agora/cli"
	customagora "github.com/agora-etl/agora/examples/custom-agora"
)

func main() {
	reg := cli.Builtins()
	customagora.Register(reg)
	os.Exit(cli.Main(os.Args[1:], cli.WithRegistry(reg)))
}
