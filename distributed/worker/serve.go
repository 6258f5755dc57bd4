package worker

import (
	"context"
	"os"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
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
	v, ok, err := s.w.value(k)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if !ok {
		return flightdata.ErrNotHeld(string(k))
	}
	if err := flightdata.Send(stream, v, s.w.cfg.Registry); err != nil {
		if status.Code(err) != codes.Unknown {
			return err
		}
		return status.Errorf(codes.Internal, "worker %s: send %q: %v", s.w.addr, k, err)
	}
	return nil
}

func (s *flightServer) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	if a.GetType() != flightdata.ActionGet {
		return status.Errorf(codes.Unimplemented, "worker %s: unknown action %q", s.w.addr, a.GetType())
	}
	return flightdata.ServeGetMany(a, stream, s.w.cfg.Registry, func(k string) (any, bool, error) {
		return s.w.value(graph.Key(k))
	})
}

// infoServer answers Worker.Info.
type infoServer struct {
	wire.UnimplementedWorkerServer
	w *Worker
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
