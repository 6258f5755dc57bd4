package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Op is a registered operation: the code that a task names by Op.Name.
type Op struct {
	// Name is the name tasks use, such as "dataframe.filter". By convention
	// it starts with the name of the package or program that registers it.
	Name string
	// Signature describes the op's params format and types. It is part of
	// the registry fingerprint, so processes that disagree on it refuse to
	// work together. Change it when the params format changes.
	Signature string
	// Cheap marks ops that cost less than scheduling a task (selecting an
	// element, building a small list). The optimizer inlines them into the
	// tasks that use them.
	Cheap bool
	// Run computes the task's value.
	Run func(ctx context.Context, in OpInput) (any, error)

	fn *funcInfo // set for ops registered from typed Go functions
}

// OpInput is what an op gets to compute one task.
type OpInput struct {
	Key    Key    // the task's key
	Params []byte // the task's encoded params
	Inputs []any  // the values of the task's dependencies, in order
	Deps   []Key  // the keys of the task's dependencies, in the order of Inputs
	Env    *Env   // where the task runs
}

// Env describes where a task runs. Executors fill it in.
type Env struct {
	Registry *Registry    // the registry of the running process
	Logger   *slog.Logger // logger with the worker's attributes; never nil when an op runs
	Worker   string       // name or address of the worker (or local slot)
	LocalDir string       // scratch directory the op may write to
	// Peers reads files that tasks on other workers of a cluster wrote in
	// their LocalDir; nil where there are no other workers.
	Peers PeerFiles
}

// PeerFiles reads byte ranges of files in the scratch directories of the
// other workers of a cluster (shuffle shards: only names under a directory
// whose name starts with "shuffle-" are served).
type PeerFiles interface {
	// OpenPeer reads length bytes from offset of the file name (slash
	// separated, relative to that worker's LocalDir) of worker (its
	// Env.Worker). Close the reader when done.
	OpenPeer(ctx context.Context, worker, name string, offset, length int64) (io.ReadCloser, error)
}

// Registry maps op names to ops and Go types to value codecs. Every process
// that runs a graph needs the same ops registered under the same names; the
// Fingerprint lets processes compare their registries.
//
// The zero value is not usable; use NewRegistry, Default or Child. A
// Registry is safe for concurrent use; lookups take no lock.
type Registry struct {
	parent *Registry
	mu     sync.Mutex // serializes writers
	snap   atomic.Pointer[regSnapshot]
}

type regSnapshot struct {
	ops    map[string]*Op
	codecs map[string]Codec
	byType map[reflect.Type]Codec
	ifaces []ifaceCodec // codecs for interface types, in registration order
}

type ifaceCodec struct {
	typ reflect.Type
	c   Codec
}

func (s *regSnapshot) clone() *regSnapshot {
	return &regSnapshot{
		ops:    maps.Clone(s.ops),
		codecs: maps.Clone(s.codecs),
		byType: maps.Clone(s.byType),
		ifaces: slices.Clone(s.ifaces),
	}
}

// NewRegistry returns an empty registry: not even the built-in ops and
// codecs are in it (see RegisterBuiltins).
func NewRegistry() *Registry {
	r := &Registry{}
	r.snap.Store(&regSnapshot{
		ops:    map[string]*Op{},
		codecs: map[string]Codec{},
		byType: map[reflect.Type]Codec{},
	})
	return r
}

var defaultRegistry = sync.OnceValue(func() *Registry {
	r := NewRegistry()
	if err := RegisterBuiltins(r); err != nil {
		panic(err) // a bug in this package: the built-ins conflict with each other
	}
	return r
})

// Default returns the process-wide registry that executors and collections
// use unless told otherwise. It holds the built-in ops and codecs.
func Default() *Registry { return defaultRegistry() }

// Child returns a registry that sees everything registered in r and
// registers into itself. Tests use it to register ops without touching the
// default registry.
func (r *Registry) Child() *Registry {
	c := NewRegistry()
	c.parent = r
	return c
}

func (r *Registry) update(f func(s *regSnapshot) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.snap.Load().clone()
	if err := f(s); err != nil {
		return err
	}
	r.snap.Store(s)
	return nil
}

// DuplicateOpError is returned when an op name is registered twice.
type DuplicateOpError struct{ Name string }

func (e *DuplicateOpError) Error() string {
	return fmt.Sprintf("op %q is already registered; op names must be unique in a program", e.Name)
}

// Register adds an op. Registering a name twice is a *DuplicateOpError.
func (r *Registry) Register(op Op) error {
	if op.Name == "" {
		return fmt.Errorf("register op: empty name")
	}
	if op.Run == nil {
		return fmt.Errorf("register op %q: Run is nil", op.Name)
	}
	if _, ok := r.Lookup(op.Name); ok {
		return &DuplicateOpError{Name: op.Name}
	}
	return r.update(func(s *regSnapshot) error {
		if _, ok := s.ops[op.Name]; ok {
			return &DuplicateOpError{Name: op.Name}
		}
		o := op
		s.ops[op.Name] = &o
		return nil
	})
}

// Lookup returns the op registered under name.
func (r *Registry) Lookup(name string) (*Op, bool) {
	for ; r != nil; r = r.parent {
		if op, ok := r.snap.Load().ops[name]; ok {
			return op, true
		}
	}
	return nil, false
}

// Op returns the op registered under name, or an *UnknownOpError that says
// how to register it.
func (r *Registry) Op(name string) (*Op, error) {
	if op, ok := r.Lookup(name); ok {
		return op, nil
	}
	return nil, &UnknownOpError{Op: name}
}

// Signatures returns the name and signature of every op and codec in the
// registry (codecs are listed as "codec:" + name, with the Go type they
// handle as signature).
func (r *Registry) Signatures() map[string]string {
	out := map[string]string{}
	var chain []*Registry
	for c := r; c != nil; c = c.parent {
		chain = append(chain, c)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i].snap.Load()
		for n, op := range s.ops {
			out[n] = op.Signature
		}
		for n, c := range s.codecs {
			out["codec:"+n] = typeName(c.Type())
		}
	}
	return out
}

// Fingerprint returns a short hash of Signatures. Two processes with the
// same fingerprint run the same ops under the same names.
func (r *Registry) Fingerprint() string {
	return FingerprintOf(r.Signatures())
}

// FingerprintOf hashes a signature table as Fingerprint does.
func FingerprintOf(sigs map[string]string) string {
	names := slices.Sorted(maps.Keys(sigs))
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\t%s\n", n, sigs[n])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// DiffSignatures lists, one line each, the names registered differently in
// two signature tables: missing on one side or with another signature.
func DiffSignatures(local, remote map[string]string) []string {
	var out []string
	for n, s := range local {
		rs, ok := remote[n]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: registered here, missing on the other side", n))
		case rs != s:
			out = append(out, fmt.Sprintf("%s: signature %q here, %q on the other side", n, s, rs))
		}
	}
	for n := range remote {
		if _, ok := local[n]; !ok {
			out = append(out, fmt.Sprintf("%s: missing here, registered on the other side", n))
		}
	}
	sort.Strings(out)
	return out
}
