package p

import "context"

// NewOrders builds a Job; its default id is "orders" too.
//
//agora:schedule once
func NewOrders(context.Context) (*Job, error) { return &Job{}, nil }

// BuildPunct uses an id that differs only in punctuation from "a-b".
//
//agora:schedule once id=a_b
func BuildPunct(context.Context) (*Job, error) { return &Job{}, nil }

// BuildPunct2 uses "a-b".
//
//agora:schedule once id=a-b
func BuildPunct2(context.Context) (*Job, error) { return &Job{}, nil }
