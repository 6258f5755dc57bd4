//go:build !linux

package mempool

func adviseHuge([]byte) {}
