// Package wire holds the protocol buffers of a Shoal cluster's control
// messages (see shoal.proto) and their generated Go code. Task graphs travel
// inside them as graph.Encode bytes; task results travel over Arrow Flight,
// not here.
package wire

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative shoal.proto
