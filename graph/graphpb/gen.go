// Package graphpb holds the protobuf messages of the task-graph wire format.
// Use graph.Encode and graph.Decode rather than these types directly.
package graphpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative graph.proto
