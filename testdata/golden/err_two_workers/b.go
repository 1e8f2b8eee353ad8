// Package p has two worker directives.
//
//agora:worker health_port=9090
package p
