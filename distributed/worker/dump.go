package worker

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// DumpState returns the worker's state machine for a cluster dump: its
// tasks, values and fetches, its transition log and the events it
// handled, with its memory now.
func (w *Worker) DumpState() *dump.WorkerState {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.state.Dump(w.addr)
	d.Time, d.MemoryLimit = time.Now(), w.cfg.MemoryLimit
	d.Memory = dump.Memory{Managed: w.store.managed, Spilled: w.store.spilled}
	if !w.cfg.InProcess {
		d.Memory.Process = procmem.RSS()
	}
	return d
}

// Story returns the transitions of keys on the worker, oldest first.
func (w *Worker) Story(keys ...graph.Key) []dump.Transition {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state.Story(w.addr, keys...)
}

func (s *infoServer) DumpState(context.Context, *wire.DumpStateRequest) (*wire.DumpStateReply, error) {
	b, err := json.Marshal(s.w.DumpState())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "worker %s: encode its state: %v", s.w.addr, err)
	}
	return &wire.DumpStateReply{Json: b}, nil
}

func (s *infoServer) DumpStory(_ context.Context, r *wire.DumpStoryRequest) (*wire.DumpStoryReply, error) {
	keys := make([]graph.Key, len(r.Keys))
	for i, k := range r.Keys {
		keys[i] = graph.Key(k)
	}
	return &wire.DumpStoryReply{Transitions: wire.EncodeTransitions(s.w.Story(keys...))}, nil
}
