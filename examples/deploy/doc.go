// Package deploy holds deployment examples for the agora command: a
// Dockerfile (static binary, distroless non-root image), a Kubernetes
// manifest (kubernetes.yaml: ConfigMap, Deployment of three replicas with
// health probes, PodDisruptionBudget) and a systemd unit (agora.service).
// Its tests check them against the real worker: every flag they pass is one
// agora worker accepts, every probe path is served by the health server,
// the ConfigMap's pipelines.toml passes config.Parse with the agora
// command's registry, and the grace periods outlast the graceful shutdown
// timeout.
package deploy
