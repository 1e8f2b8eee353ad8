// Package p has a worker but no pipelines.
//
//agora:worker health_port=8080
package p
