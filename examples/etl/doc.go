// Package etl is an example agora project: the pipelines of a small shop's
// data platform, declared with //agora:schedule comments and wired into a
// worker by the generated worker.go.
//
//   - orders-rollup (cron, every 10 seconds for the demo; hourly in real life)
//     sums the orders of the last window into the warehouse;
//   - inventory-sync (every 5 seconds) copies stock levels from the shop's
//     database to the warehouse;
//   - events-consumer (continuous) drains the click-stream queue in batches
//     and finishes its batch when a shutdown begins;
//   - schema-migrate (once) creates the warehouse tables before anything
//     else needs them, on exactly one replica of the fleet.
//
// Every load into the warehouse carries the run's fencing token, so the
// warehouse rejects a writer whose lease has been taken over.
//
// cmd/etl-worker is the worker binary; cmd/demo runs three replicas of it
// against one Redis and shows which replica ran each slot (make run).
//
//agora:worker health_port=8080 graceful_shutdown=10s distributed=auto
package etl

//go:generate go run github.com/agora-etl/agora/cmd/agoragen
