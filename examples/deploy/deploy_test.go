package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agora-etl/agora/cli"
	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/runtime"
)

// healthPortFlag is the worker flag the examples set the health port with.
const healthPortFlag = "health-port"

// workerFlags returns the flags agora worker accepts, read from its own
// -h output (its --config and --module, then the worker flags every
// generated binary takes).
func workerFlags(t *testing.T) map[string]bool {
	t.Helper()
	var out bytes.Buffer
	if code := cli.Main([]string{"worker", "-h"}, cli.WithOutput(&out, &out)); code != cli.ExitOK {
		t.Fatalf("agora worker -h exited %d:\n%s", code, out.String())
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--?([a-z][a-z-]*)\b`).FindAllStringSubmatch(out.String(), -1) {
		flags[m[1]] = true
	}
	for _, want := range []string{"config", "module", healthPortFlag, "health-addr", "log-format", "log-level"} {
		if !flags[want] {
			t.Fatalf("agora worker -h does not list -%s (parsed %v) in:\n%s", want, flags, out.String())
		}
	}
	return flags
}

// checkArgs checks that args run agora worker with flags it accepts, and
// returns each flag's value.
func checkArgs(t *testing.T, where string, args []string, known map[string]bool) map[string]string {
	t.Helper()
	if len(args) == 0 || args[0] != "worker" {
		t.Fatalf("%s: args %q do not start with the worker command", where, args)
	}
	values := map[string]string{}
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			t.Errorf("%s: argument %q is not a flag (a subcommand would not run the pool)", where, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !known[name] {
			t.Errorf("%s: flag %q is not one agora worker accepts", where, arg)
		}
		if !hasValue {
			if i+1 >= len(args) {
				t.Errorf("%s: flag %q has no value", where, arg)
				continue
			}
			i++
			value = args[i]
		}
		values[name] = value
	}
	if values["config"] == "" {
		t.Errorf("%s: args %q give no --config", where, args)
	}
	return values
}

// manifests are the parts of kubernetes.yaml the tests read.
type manifests struct {
	configMap struct {
		Metadata struct{ Name string }
		Data     map[string]string
	}
	deployment struct {
		Spec struct {
			Replicas int
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			}
			Template struct {
				Metadata struct{ Labels map[string]string }
				Spec     struct {
					TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
					SecurityContext               struct {
						RunAsNonRoot *bool `yaml:"runAsNonRoot"`
						RunAsUser    *int  `yaml:"runAsUser"`
					} `yaml:"securityContext"`
					Containers []container
					Volumes    []struct {
						Name      string
						ConfigMap struct{ Name string } `yaml:"configMap"`
					}
				}
			}
		}
	}
	pdb struct {
		Spec struct {
			MinAvailable   *int `yaml:"minAvailable"`
			MaxUnavailable *int `yaml:"maxUnavailable"`
			Selector       struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			}
		}
	}
}

type container struct {
	Name string
	Args []string
	Env  []struct {
		Name      string
		Value     *string
		ValueFrom *struct {
			SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	Ports []struct {
		Name          string
		ContainerPort int `yaml:"containerPort"`
	}
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	VolumeMounts   []struct {
		Name      string
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string
		Port yaml.Node // a number or a port name
	} `yaml:"httpGet"`
}

// readManifests parses kubernetes.yaml: one ConfigMap, Deployment and
// PodDisruptionBudget each.
func readManifests(t *testing.T) *manifests {
	t.Helper()
	data, err := os.ReadFile("kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifests
	seen := map[string]int{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("kubernetes.yaml: %v", err)
		}
		var head struct{ APIVersion, Kind string }
		if err := doc.Decode(&head); err != nil {
			t.Fatalf("kubernetes.yaml:%d: %v", doc.Line, err)
		}
		var into any
		switch head.Kind {
		case "ConfigMap":
			into = &m.configMap
		case "Deployment":
			into = &m.deployment
		case "PodDisruptionBudget":
			into = &m.pdb
		default:
			t.Fatalf("kubernetes.yaml:%d: unexpected kind %q", doc.Line, head.Kind)
		}
		seen[head.Kind]++
		if err := doc.Decode(into); err != nil {
			t.Fatalf("kubernetes.yaml:%d: %s: %v", doc.Line, head.Kind, err)
		}
	}
	for _, kind := range []string{"ConfigMap", "Deployment", "PodDisruptionBudget"} {
		if seen[kind] != 1 {
			t.Fatalf("kubernetes.yaml has %d %s documents, want 1", seen[kind], kind)
		}
	}
	return &m
}

// pipelines returns the ConfigMap's pipelines.toml, checked with the
// agora command's registry.
func pipelines(t *testing.T, m *manifests) (*config.File, []byte) {
	t.Helper()
	data, ok := m.configMap.Data["pipelines.toml"]
	if !ok {
		t.Fatal("kubernetes.yaml: the ConfigMap has no pipelines.toml")
	}
	file, err := config.Parse("kubernetes.yaml:pipelines.toml", []byte(data), config.WithRegistry(cli.Builtins()),
		config.WithLookupEnv(func(string) (string, bool) { return "", false }))
	if err != nil {
		t.Fatalf("the ConfigMap's pipelines.toml: %v", err)
	}
	return file, []byte(data)
}

// graceful returns the worker's graceful shutdown timeout under file.
func graceful(file *config.File) time.Duration {
	if d := file.Worker.GracefulShutdownTimeout; d > 0 {
		return d
	}
	return runtime.DefaultGracefulShutdownTimeout
}

// servedPaths starts a pool built from file with its real health server on
// 127.0.0.1 and returns the status code of GET on each path once every
// pipeline has started.
func servedPaths(t *testing.T, file *config.File, paths []string) map[string]int {
	t.Helper()
	// The example's pool runs on its own: no Redis.
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	os.Unsetenv("AGORA_DISTRIBUTED_REDIS_URL")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, err := file.Pool(runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false), runtime.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("pool.Run: %v", err)
		}
	}()
	select {
	case <-pool.Started():
	case err := <-done:
		t.Fatalf("pool.Run returned before starting: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the pool did not start within 10s")
	}
	codes := map[string]int{}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, p := range paths {
		resp, err := client.Get("http://" + pool.HealthAddr() + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[p] = resp.StatusCode
	}
	return codes
}

func TestKubernetes(t *testing.T) {
	known := workerFlags(t)
	m := readManifests(t)
	file, _ := pipelines(t, m)

	d := m.deployment.Spec
	if d.Replicas != 3 {
		t.Errorf("Deployment replicas = %d, want 3", d.Replicas)
	}
	pod := d.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	flags := checkArgs(t, "kubernetes.yaml container args", c.Args, known)

	// The health port: the -health-port flag, the container port and both
	// probes agree.
	port, err := strconv.Atoi(flags[healthPortFlag])
	if err != nil {
		t.Fatalf("kubernetes.yaml: -%s %q is not a port", healthPortFlag, flags[healthPortFlag])
	}
	portNames := map[string]int{}
	for _, p := range c.Ports {
		portNames[p.Name] = p.ContainerPort
	}
	probes := map[string]*probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe}
	wantPath := map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"}
	var paths []string
	for name, pr := range probes {
		if pr == nil || pr.HTTPGet == nil {
			t.Fatalf("kubernetes.yaml: the container has no httpGet %s", name)
		}
		if pr.HTTPGet.Path != wantPath[name] {
			t.Errorf("kubernetes.yaml: %s path %q, want %q", name, pr.HTTPGet.Path, wantPath[name])
		}
		paths = append(paths, pr.HTTPGet.Path)
		probePort, err := strconv.Atoi(pr.HTTPGet.Port.Value)
		if err != nil {
			var ok bool
			if probePort, ok = portNames[pr.HTTPGet.Port.Value]; !ok {
				t.Errorf("kubernetes.yaml: %s port %q names no container port", name, pr.HTTPGet.Port.Value)
			}
		}
		if probePort != port {
			t.Errorf("kubernetes.yaml: %s probes port %d, but -%s is %d", name, probePort, healthPortFlag, port)
		}
	}
	// Every probe path is one the worker's health server really answers,
	// 200 once the pipelines have started.
	for p, code := range servedPaths(t, file, paths) {
		if code != http.StatusOK {
			t.Errorf("GET %s on a started worker = %d, want 200", p, code)
		}
	}

	if pod.TerminationGracePeriodSeconds == nil {
		t.Error("kubernetes.yaml: no terminationGracePeriodSeconds (the default 30s is not above the graceful timeout)")
	} else if grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second; grace <= graceful(file) {
		t.Errorf("kubernetes.yaml: terminationGracePeriodSeconds %s is not above the graceful shutdown timeout %s", grace, graceful(file))
	}
	if sc := pod.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Error("kubernetes.yaml: the pod does not set runAsNonRoot: true with a non-zero runAsUser")
	}

	// The Redis URL comes from a Secret, never a literal.
	var redis bool
	for _, e := range c.Env {
		if e.Name != "AGORA_DISTRIBUTED_REDIS_URL" {
			continue
		}
		redis = true
		if e.Value != nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
			t.Error("kubernetes.yaml: AGORA_DISTRIBUTED_REDIS_URL is not taken from a Secret with valueFrom.secretKeyRef")
		}
	}
	if !redis {
		t.Error("kubernetes.yaml: the container does not set AGORA_DISTRIBUTED_REDIS_URL")
	}

	// --config names the ConfigMap's pipelines.toml where it is mounted.
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v.ConfigMap.Name
	}
	var mounted bool
	for _, vm := range c.VolumeMounts {
		if volumes[vm.Name] == m.configMap.Metadata.Name && path.Join(vm.MountPath, "pipelines.toml") == flags["config"] {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("kubernetes.yaml: --config %s is not the ConfigMap %s's pipelines.toml as mounted", flags["config"], m.configMap.Metadata.Name)
	}

	if !sameLabels(d.Selector.MatchLabels, d.Template.Metadata.Labels) {
		t.Errorf("kubernetes.yaml: the Deployment's selector %v does not match its pod labels %v", d.Selector.MatchLabels, d.Template.Metadata.Labels)
	}
	pdb := m.pdb.Spec
	if !(pdb.MaxUnavailable != nil && *pdb.MaxUnavailable == 1 || pdb.MinAvailable != nil && *pdb.MinAvailable == d.Replicas-1) {
		t.Error("kubernetes.yaml: the PodDisruptionBudget does not allow exactly one pod down")
	}
	if !sameLabels(pdb.Selector.MatchLabels, d.Template.Metadata.Labels) {
		t.Errorf("kubernetes.yaml: the PodDisruptionBudget's selector %v does not match the pods %v", pdb.Selector.MatchLabels, d.Template.Metadata.Labels)
	}
}

// sameLabels reports whether selector is non-empty and every label in it
// is on labels.
func sameLabels(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// unit reads a systemd unit: section.key to the values, in order.
func unit(t *testing.T, name string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not key=value in a section", name, n, line)
			}
			if strings.HasSuffix(v, "\\") {
				t.Fatalf("%s:%d: continuation lines are not expected", name, n)
			}
			out[section+"."+strings.TrimSpace(k)] = append(out[section+"."+strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return out
}

func TestSystemd(t *testing.T) {
	known := workerFlags(t)
	file, _ := pipelines(t, readManifests(t))
	u := unit(t, "agora.service")
	one := func(key string) string {
		t.Helper()
		v := u[key]
		if len(v) != 1 {
			t.Fatalf("agora.service: %s is set %d times, want once", key, len(v))
		}
		return v[0]
	}
	execStart := strings.Fields(one("Service.ExecStart"))
	if len(execStart) == 0 || path.Base(execStart[0]) != "agora" || !path.IsAbs(execStart[0]) {
		t.Fatalf("agora.service: ExecStart %q does not run an absolute path to agora", execStart)
	}
	checkArgs(t, "agora.service ExecStart", execStart[1:], known)
	for key, want := range map[string]string{"Service.Restart": "on-failure", "Service.KillSignal": "SIGTERM"} {
		if got := one(key); got != want {
			t.Errorf("agora.service: %s=%s, want %s", key, got, want)
		}
	}
	stop, err := time.ParseDuration(one("Service.TimeoutStopSec"))
	if err != nil {
		t.Fatalf("agora.service: TimeoutStopSec: %v (write it with a unit, such as 45s)", err)
	}
	if stop <= graceful(file) {
		t.Errorf("agora.service: TimeoutStopSec %s is not above the graceful shutdown timeout %s", stop, graceful(file))
	}
	if user := one("Service.User"); user == "" || user == "root" || user == "0" {
		t.Errorf("agora.service: User=%s, want a non-root user", user)
	}
	if env := one("Service.EnvironmentFile"); !path.IsAbs(strings.TrimPrefix(env, "-")) {
		t.Errorf("agora.service: EnvironmentFile=%s is not an absolute path", env)
	}
	for _, key := range []string{"NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp"} {
		if len(u["Service."+key]) == 0 {
			t.Errorf("agora.service: no %s hardening", key)
		}
	}
	verifyUnit(t, execStart[0])
}

// verifyUnit runs systemd-analyze verify on agora.service, with the agora
// path in ExecStart replaced by an executable that exists here (the test
// binary), and fails on any complaint: an unknown key, a bad value.
func verifyUnit(t *testing.T, agora string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not on the PATH; agora.service checked by the parser above only")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("agora.service")
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "agora.service")
	if err := os.WriteFile(copied, bytes.ReplaceAll(data, []byte("ExecStart="+agora+" "), []byte("ExecStart="+self+" ")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", copied).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify agora.service (ExecStart's binary replaced by %s): %v\n%s", self, err, out)
	}
}

// stage is one FROM stage of a Dockerfile, its instructions with
// continuation lines joined.
type stage struct {
	from, name string
	lines      []string
}

func dockerStages(t *testing.T, name string) []stage {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var pending string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			pending += s + " "
			continue
		}
		line, pending = pending+line, ""
		if f := strings.Fields(line); strings.EqualFold(f[0], "FROM") {
			st := stage{from: f[1]}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				st.name = f[3]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %q before any FROM", name, line)
		}
		stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
	}
	return stages
}

// instruction returns the arguments of the stage's instructions named op.
func (s stage) instruction(op string) []string {
	var out []string
	for _, l := range s.lines {
		if k, rest, _ := strings.Cut(l, " "); strings.EqualFold(k, op) {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

// execForm decodes an instruction's JSON exec form.
func execForm(t *testing.T, op, v string) []string {
	t.Helper()
	var args []string
	if err := json.Unmarshal([]byte(v), &args); err != nil {
		t.Fatalf("Dockerfile: %s %s is not an exec-form JSON array: %v", op, v, err)
	}
	return args
}

func TestDockerfile(t *testing.T) {
	known := workerFlags(t)
	stages := dockerStages(t, "Dockerfile")
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a builder and a final one", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !strings.HasPrefix(build.from, "golang:") || build.name == "" {
		t.Errorf("Dockerfile: the first stage is FROM %s AS %q, want a named golang stage", build.from, build.name)
	}
	var built bool
	for _, run := range build.instruction("RUN") {
		if strings.Contains(run, "go build") && strings.Contains(run, "CGO_ENABLED=0") && strings.HasSuffix(run, " ./cmd/agora") {
			built = true
		}
	}
	if !built {
		t.Errorf("Dockerfile: the %s stage has no RUN CGO_ENABLED=0 go build ... ./cmd/agora", build.name)
	}
	var copied bool
	for _, c := range final.instruction("COPY") {
		if strings.HasPrefix(c, "--from="+build.name+" ") {
			copied = true
		}
	}
	if !copied {
		t.Errorf("Dockerfile: the final stage copies nothing from %s", build.name)
	}
	users := final.instruction("USER")
	if len(users) == 0 {
		t.Fatal("Dockerfile: the final stage sets no USER")
	}
	if u, _, _ := strings.Cut(users[len(users)-1], ":"); u == "root" || u == "0" {
		t.Errorf("Dockerfile: the final stage runs as USER %s", users[len(users)-1])
	} else if _, err := strconv.Atoi(u); err != nil {
		t.Errorf("Dockerfile: USER %s is not numeric, which Kubernetes' runAsNonRoot cannot verify", u)
	}

	entry := final.instruction("ENTRYPOINT")
	cmd := final.instruction("CMD")
	if len(entry) != 1 || len(cmd) != 1 {
		t.Fatalf("Dockerfile: the final stage has %d ENTRYPOINT and %d CMD, want one each", len(entry), len(cmd))
	}
	if e := execForm(t, "ENTRYPOINT", entry[0]); len(e) != 1 || path.Base(e[0]) != "agora" {
		t.Errorf("Dockerfile: ENTRYPOINT %q does not run agora", e)
	}
	flags := checkArgs(t, "Dockerfile CMD", execForm(t, "CMD", cmd[0]), known)
	expose := final.instruction("EXPOSE")
	if want := flags[healthPortFlag]; len(expose) != 1 || expose[0] != want && expose[0] != want+"/tcp" {
		t.Errorf("Dockerfile: EXPOSE %q, want the -%s %s", expose, healthPortFlag, want)
	}

	// The image and the Deployment run the same command.
	m := readManifests(t)
	if got, want := fmt.Sprint(m.deployment.Spec.Template.Spec.Containers[0].Args), fmt.Sprint(execForm(t, "CMD", cmd[0])); got != want {
		t.Errorf("kubernetes.yaml args %s differ from the Dockerfile's CMD %s", got, want)
	}
}
