// Package conns keeps one gRPC client connection per peer address.
package conns

import (
	"fmt"
	"sync"

	"google.golang.org/grpc"
)

// Pool hands out connections to peers, dialled once and kept until Close.
type Pool struct {
	opts   []grpc.DialOption
	mu     sync.Mutex
	m      map[string]*grpc.ClientConn
	closed bool
}

// New returns a pool that dials with opts.
func New(opts ...grpc.DialOption) *Pool {
	return &Pool{opts: opts, m: map[string]*grpc.ClientConn{}}
}

// Get returns the connection to addr. Connecting happens lazily, on the
// first call made over it.
func (p *Pool) Get(addr string) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("connect to %s: connection pool is closed", addr)
	}
	if c, ok := p.m[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient(addr, p.opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	p.m[addr] = c
	return c, nil
}

// Forget closes the connection to addr, if any.
func (p *Pool) Forget(addr string) {
	p.mu.Lock()
	c := p.m[addr]
	delete(p.m, addr)
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Close closes every connection.
func (p *Pool) Close() error {
	p.mu.Lock()
	cs := p.m
	p.m = map[string]*grpc.ClientConn{}
	p.closed = true
	p.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
	return nil
}
