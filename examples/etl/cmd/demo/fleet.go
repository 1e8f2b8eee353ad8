package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// fleet is the running replicas.
type fleet struct {
	replicas []*replica
	exited   chan error
}

type replica struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	code int
	wg   sync.WaitGroup // log readers
}

// startFleet starts n replicas of bin against redisURL. Their JSON logs go to
// report; lines that are not runs go to stderr prefixed with the replica.
func startFleet(bin string, n int, redisURL string, report *report, stderr io.Writer) (*fleet, error) {
	f := &fleet{exited: make(chan error, n)}
	for i := range n {
		r := &replica{name: fmt.Sprintf("replica-%d", i+1), done: make(chan struct{})}
		r.cmd = exec.Command(bin, "-health-port", "0", "-log-format", "json")
		r.cmd.Env = append(os.Environ(), "AGORA_DISTRIBUTED_REDIS_URL="+redisURL)
		// Its own process group: Ctrl+C reaches only the demo, which then
		// stops each replica once, gracefully. Pdeathsig stops a replica
		// if the demo itself dies.
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
		out, err := r.cmd.StderrPipe()
		if err != nil {
			f.Stop(time.Second)
			return nil, err
		}
		r.cmd.Stdout = nil
		if err := r.cmd.Start(); err != nil {
			f.Stop(time.Second)
			return nil, fmt.Errorf("start %s: %w", r.name, err)
		}
		f.replicas = append(f.replicas, r)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				if !report.line(r.name, sc.Bytes()) {
					fmt.Fprintf(stderr, "%s| %s\n", r.name, sc.Text())
				}
			}
		}()
		go func() {
			r.wg.Wait()
			err := r.cmd.Wait()
			r.code = r.cmd.ProcessState.ExitCode()
			close(r.done)
			if err != nil {
				f.exited <- fmt.Errorf("%s: %w", r.name, err)
			} else {
				f.exited <- fmt.Errorf("%s exited", r.name)
			}
		}()
	}
	return f, nil
}

// Exited delivers an error when a replica exits by itself.
func (f *fleet) Exited() <-chan error { return f.exited }

// Stop sends SIGTERM to every replica, waits up to grace for them to finish
// their runs, kills what is left, and returns the exit codes.
func (f *fleet) Stop(grace time.Duration) []int {
	for _, r := range f.replicas {
		r.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(grace)
	codes := make([]int, len(f.replicas))
	for i, r := range f.replicas {
		select {
		case <-r.done:
		case <-deadline:
			r.cmd.Process.Kill()
			<-r.done
		}
		codes[i] = r.code
	}
	return codes
}
