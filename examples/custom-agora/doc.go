// Package customagora shows a Go program adding a component of its own to
// agora's config-only worker: a "sequence" source that counts.
//
// Register adds it to a registry; handed to the agora command's entry
// point, that registry makes a binary that runs agora/v1 files using
// `type = "sequence"` beside every built-in component. cmd/custom-agora is
// that binary, in full:
//
//	func main() {
//		reg := cli.Builtins()
//		customagora.Register(reg)
//		os.Exit(cli.Main(os.Args[1:], cli.WithRegistry(reg)))
//	}
//
// and pipelines.toml is a file it runs:
//
//	go run ./examples/custom-agora/cmd/custom-agora run --config examples/custom-agora/pipelines.toml
package customagora
