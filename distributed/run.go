package distributed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/shoal-data/shoal/distributed/internal/runcall"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/distributed/worker"
)

// Run calls the function registered under fn (graph.RegisterFunc) on args
// directly on every worker, or on the named ones (addresses or names),
// bypassing the scheduler: the Dask tutorial's client.run. It returns the
// result per worker address, and the error per worker address of the
// workers where the call failed. The error is for calls that could not be
// made at all (unknown function, arguments that cannot be encoded, a named
// worker that is not in the cluster).
func (c *Client) Run(ctx context.Context, fn string, args []any, workers ...string) (map[string]any, map[string]error, error) {
	req, err := runcall.Request(c.cfg.registry, fn, args)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", fn, err)
	}
	addrs, err := c.resolveWorkers(ctx, workers)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", fn, err)
	}
	vals, errs := map[string]any{}, map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.runOn(ctx, a, req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[a] = err
				return
			}
			vals[a] = v
		}()
	}
	wg.Wait()
	return vals, errs, nil
}

func (c *Client) runOn(ctx context.Context, addr string, req *wire.RunRequest) (any, error) {
	conn, err := c.peers.Get(addr)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", addr, err)
	}
	rep, err := wire.NewWorkerClient(conn).Run(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", addr, err)
	}
	return runcall.Decode(c.cfg.registry, rep)
}

// resolveWorkers turns worker names or addresses into addresses; none
// means every worker.
func (c *Client) resolveWorkers(ctx context.Context, names []string) ([]string, error) {
	info, err := c.Info(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range info.Workers {
		if len(names) == 0 || slices.Contains(names, w.Address) || slices.Contains(names, w.Name) {
			out = append(out, w.Address)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(info.Workers, func(w WorkerInfo) bool { return w.Address == n || w.Name == n }) {
			return nil, fmt.Errorf("no worker %q in the cluster", n)
		}
	}
	return out, nil
}

// RunOnScheduler calls the function registered under fn on args in the
// scheduler process (which must have it registered: a LocalCluster's
// scheduler runs in this program).
func (c *Client) RunOnScheduler(ctx context.Context, fn string, args ...any) (any, error) {
	req, err := runcall.Request(c.cfg.registry, fn, args)
	if err != nil {
		return nil, fmt.Errorf("run %s on the scheduler: %w", fn, err)
	}
	rep, err := wire.NewSchedulerClient(c.conn).Run(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("run %s on the scheduler %s: %w", fn, c.addr, err)
	}
	return runcall.Decode(c.cfg.registry, rep)
}

// WorkerPlugin is a worker plugin's code (Setup, Transition, Teardown);
// see RegisterWorkerPlugin and Client.RegisterWorkerPlugin.
type WorkerPlugin = worker.Plugin

// RegisterWorkerPlugin registers a kind of worker plugin under name, made
// from its encoded configuration by f. Call it at init time in the program
// the workers run, as for ops.
func RegisterWorkerPlugin(name string, f func(config []byte) (WorkerPlugin, error)) error {
	return worker.RegisterPlugin(name, f)
}

// PluginSpec names a registered worker plugin and its configuration.
type PluginSpec struct {
	Name   string
	Config []byte
}

// NewPluginSpec makes the spec of the plugin registered under name, with
// config encoded as JSON.
func NewPluginSpec(name string, config any) (PluginSpec, error) {
	b, err := json.Marshal(config)
	if err != nil {
		return PluginSpec{}, fmt.Errorf("plugin %s: encode the configuration: %w", name, err)
	}
	return PluginSpec{Name: name, Config: b}, nil
}

// UploadFile is the built-in plugin that copies the file at path into each
// worker's local directory (WorkerInfo.LocalDir), under its base name.
func UploadFile(path string) (PluginSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PluginSpec{}, fmt.Errorf("upload file: %w", err)
	}
	return NewPluginSpec(worker.UploadFilePlugin, worker.UploadFile{Name: filepath.Base(path), Data: b})
}

// Environ is the built-in plugin that sets environment variables in each
// worker process, as Dask's Environ nanny plugin does. The nanny of a
// worker that has one (LocalClusterOptions.Nanny, `shoal worker --nanny`)
// sets them in the environment it starts the worker process with, and
// restarts the worker, so that they hold from the start of the process
// (libraries read such variables as OMP_NUM_THREADS when they start); it
// keeps them for every later start, and nannies that join later get them
// too. The restart is a worker loss to the scheduler: the values the
// worker held are computed again when needed. A worker without a nanny
// (in-process workers, worker processes of a LocalCluster without Nanny,
// `shoal worker` without --nanny) sets them in its running process with
// os.Setenv when the plugin is set up, which code that read them at start
// does not see. Registering Environ again adds to the variables.
func Environ(vars map[string]string) (PluginSpec, error) {
	return NewPluginSpec(worker.EnvironPlugin, vars)
}

// RegisterWorkerPlugin sets the plugin up on every worker, and on every
// worker that joins later. It returns the status per worker address: nil
// when the setup went well (OK), or its error. A worker that its nanny
// restarted for Environ is reported under its new address, once it has
// joined with the variables.
func (c *Client) RegisterWorkerPlugin(ctx context.Context, p PluginSpec) (map[string]error, error) {
	rep, err := wire.NewSchedulerClient(c.conn).RegisterWorkerPlugin(ctx, &wire.PluginRequest{Name: p.Name,
		Config: p.Config})
	if err != nil {
		return nil, fmt.Errorf("register worker plugin %s: %w", p.Name, err)
	}
	out := make(map[string]error, len(rep.Statuses))
	for _, st := range rep.Statuses {
		if st.Error != "" {
			out[st.Worker] = fmt.Errorf("%s", st.Error)
		} else {
			out[st.Worker] = nil
		}
	}
	return out, nil
}
