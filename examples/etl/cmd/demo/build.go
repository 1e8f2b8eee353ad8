package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
)

// workerPackage is the worker the demo runs.
const workerPackage = "github.com/agora-etl/agora/examples/etl/cmd/etl-worker"

// buildWorker builds the example worker into bin.
func buildWorker(ctx context.Context, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, workerPackage)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", workerPackage, err, out.String())
	}
	return nil
}
