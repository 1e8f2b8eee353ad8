// Command agora runs config-only workers: pipelines declared in an agora/v1
// TOML file, on the same runtime, lease coordinator and record model as
// generated workers. See package github.com/agora-etl/agora/cli for the
// manual, or run agora help.
package main

import (
	"os"

	"github.com/agora-etl/agora/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
