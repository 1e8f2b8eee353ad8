//agora:worker health_port=8080

package p
