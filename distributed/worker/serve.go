package worker

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/internal/runcall"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// flightServer serves the worker's values: DoGet with the key as ticket.
type flightServer struct {
	flight.BaseFlightServer
	w *Worker
}

func (s *flightServer) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	k := graph.Key(t.GetTicket())
	start := time.Now()
	v, ok, err := s.w.value(k)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if !ok {
		return flightdata.ErrNotHeld(string(k))
	}
	size := graph.SizeOf(v)
	s.w.tel.inService(1, size)
	defer s.w.tel.inService(-1, -size)
	if err := flightdata.Send(stream, v, s.w.cfg.Registry); err != nil {
		if status.Code(err) != codes.Unknown {
			return err
		}
		return status.Errorf(codes.Internal, "worker %s: send %q: %v", s.w.addr, k, err)
	}
	peer, _ := requester(stream.Context())
	s.w.served(peer, k.Prefix(), size, time.Since(start))
	return nil
}

// DoPut takes a value a client scatters: the descriptor path is its key.
// The scheduler then learns of it through a task of the ScatteredOp, which
// the worker answers at once.
func (s *flightServer) DoPut(stream flight.FlightService_DoPutServer) error {
	v, key, err := flightdata.ReceivePut(stream, s.w.cfg.Registry)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "worker %s: receive a scattered value: %v", s.w.addr, err)
	}
	if key == "" {
		return status.Errorf(codes.InvalidArgument, "worker %s: scattered value without a key", s.w.addr)
	}
	w := s.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return status.Errorf(codes.Unavailable, "worker %s is closing", w.addr)
	}
	w.handle(&Put{Key: graph.Key(key), Value: v, Size: graph.SizeOf(v)})
	w.mu.Unlock()
	w.logger.Debug("took a scattered value", "key", key)
	return stream.Send(&flight.PutResult{})
}

func (s *flightServer) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	switch a.GetType() {
	case flightdata.ActionGet:
	case flightdata.ActionReadFile:
		return s.w.serveFile(a, stream)
	case flightdata.ActionRemoveDirs:
		return flightdata.ServeRemoveDirs(a, stream, s.w.env.LocalDir)
	default:
		return status.Errorf(codes.Unimplemented, "worker %s: unknown action %q", s.w.addr, a.GetType())
	}
	peer, _ := requester(stream.Context())
	return flightdata.ServeGetMany(a, stream, s.w.cfg.Registry, func(k string) (any, bool, error) {
		start := time.Now()
		v, ok, err := s.w.value(graph.Key(k))
		if ok && err == nil {
			s.w.served(peer, graph.Key(k).Prefix(), graph.SizeOf(v), time.Since(start))
		}
		return v, ok, err
	})
}

// infoServer answers Worker.Info.
type infoServer struct {
	wire.UnimplementedWorkerServer
	w *Worker
}

func (s *infoServer) Run(ctx context.Context, req *wire.RunRequest) (*wire.RunReply, error) {
	w := s.w
	w.logger.Info("running a call from a client", "key", req.Key)
	env := &graph.Env{Registry: w.cfg.Registry, Logger: w.logger.With("key", req.Key), Worker: w.addr, LocalDir: w.dir}
	return runcall.Serve(ctx, w.cfg.Registry, env, req), nil
}

func (s *infoServer) Plugin(ctx context.Context, req *wire.PluginRequest) (*wire.PluginStatus, error) {
	st := &wire.PluginStatus{Worker: s.w.addr}
	if err := s.w.setupPlugin(ctx, req.Name, req.Config); err != nil {
		st.Error = err.Error()
	}
	return st, nil
}

func (s *infoServer) Telemetry(ctx context.Context, _ *wire.InfoRequest) (*wire.WorkerBatch, error) {
	w := s.w
	if w.tel.profiler != nil {
		if err := w.tel.profiler.Flush(ctx); err != nil {
			return nil, status.FromContextError(err).Err()
		}
	}
	b := &wire.WorkerBatch{}
	w.telemetryBatch(b)
	return b, nil
}

func (s *infoServer) Info(context.Context, *wire.InfoRequest) (*wire.WorkerInfo, error) {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	return &wire.WorkerInfo{Address: w.addr, Name: w.cfg.Name, Threads: int32(w.cfg.Threads),
		MemoryLimit: w.cfg.MemoryLimit, Resources: w.cfg.Resources, LocalDir: w.dir, Nanny: w.cfg.Nanny,
		Memory:     &wire.Memory{Managed: w.store.managed, Spilled: w.store.spilled, Process: procmem.RSS()},
		Processing: int32(w.state.Executing()), Pid: int32(os.Getpid())}, nil
}

// ScatteredOp is the op of the task that stands for a value a client
// scattered to a worker: the worker holding the value answers it at once;
// run anywhere else (the worker died), it fails, for the value is lost.
const ScatteredOp = "distributed.scattered"

func init() {
	graph.Default().Register(graph.Op{Name: ScatteredOp, Run: func(_ context.Context, in graph.OpInput) (any, error) {
		return nil, fmt.Errorf("scattered value %q is lost: the worker it was scattered to is gone or dropped it "+
			"(scatter it again)", in.Key)
	}})
}
