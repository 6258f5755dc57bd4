package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// Plugin is code that a worker runs when it is set up, for each task
// transition, and when it stops (Dask's WorkerPlugin). Plugins are
// registered by name in every worker process (RegisterPlugin, at init) and
// set up with an encoded configuration (Client.RegisterWorkerPlugin);
// workers that join later set them up too.
type Plugin interface {
	// Setup runs when the plugin is registered, or when the worker joins.
	// env describes the worker: its address and own directory.
	Setup(ctx context.Context, env *graph.Env) error
	// Transition is called when a task changes state on the worker:
	// "waiting" to "executing", "executing" to "memory" or "error",
	// "memory" to "released". It runs under the worker's lock and must not
	// block.
	Transition(key graph.Key, from, to string)
	// Teardown runs when the worker stops or the plugin is replaced.
	Teardown(ctx context.Context) error
}

// PluginFactory makes a plugin from its configuration.
type PluginFactory func(config []byte) (Plugin, error)

var plugins = struct {
	sync.Mutex
	m map[string]PluginFactory
}{m: map[string]PluginFactory{}}

// RegisterPlugin registers a kind of plugin under name. Register at init
// time, in the program the workers run, like ops.
func RegisterPlugin(name string, f PluginFactory) error {
	plugins.Lock()
	defer plugins.Unlock()
	if name == "" || f == nil {
		return fmt.Errorf("register worker plugin: empty name or nil factory")
	}
	if _, dup := plugins.m[name]; dup {
		return fmt.Errorf("register worker plugin %q: already registered", name)
	}
	plugins.m[name] = f
	return nil
}

// PluginNames returns the names of the registered plugins, sorted.
func PluginNames() []string {
	plugins.Lock()
	defer plugins.Unlock()
	names := make([]string, 0, len(plugins.m))
	for n := range plugins.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func pluginFactory(name string) (PluginFactory, bool) {
	plugins.Lock()
	defer plugins.Unlock()
	f, ok := plugins.m[name]
	return f, ok
}

// UploadFilePlugin is the name of the built-in plugin that writes a file
// into each worker's own directory (the Dask tutorial's UploadFile). Its
// configuration is UploadFile as JSON.
const UploadFilePlugin = "shoal.upload-file"

// UploadFile is the configuration of the UploadFilePlugin.
type UploadFile struct {
	Name string `json:"name"` // base name of the file
	Data []byte `json:"data"`
}

// EnvironPlugin is the name of the built-in plugin that sets environment
// variables. Its configuration is a JSON object of names and values. The
// scheduler hands it to the nanny of a worker that has one, which starts
// the worker process again with them; a worker without a nanny sets them
// in its own process when the plugin is set up (os.Setenv), which code
// that read them when the process started does not see.
const EnvironPlugin = wire.EnvironPlugin

type uploadFile struct{ cfg UploadFile }

func (p *uploadFile) Setup(_ context.Context, env *graph.Env) error {
	name := p.cfg.Name
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return fmt.Errorf("upload file: %q is not a plain file name", name)
	}
	path := filepath.Join(env.LocalDir, name)
	if err := os.WriteFile(path, p.cfg.Data, 0o644); err != nil {
		return fmt.Errorf("upload file: %w", err)
	}
	env.Logger.Info("uploaded file", "path", path, "bytes", len(p.cfg.Data))
	return nil
}

func (*uploadFile) Transition(graph.Key, string, string) {}
func (*uploadFile) Teardown(context.Context) error       { return nil }

type environ struct{ vars map[string]string }

func (p *environ) Setup(_ context.Context, env *graph.Env) error {
	if err := wire.CheckEnviron(p.vars); err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(p.vars))
	for _, k := range names {
		if err := os.Setenv(k, p.vars[k]); err != nil {
			return fmt.Errorf("environ: set %s: %w", k, err)
		}
	}
	env.Logger.Info("set environment variables", "names", strings.Join(names, ","))
	return nil
}

func (*environ) Transition(graph.Key, string, string) {}
func (*environ) Teardown(context.Context) error       { return nil }

func init() {
	RegisterPlugin(UploadFilePlugin, func(config []byte) (Plugin, error) {
		var c UploadFile
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("upload file: configuration: %w", err)
		}
		return &uploadFile{cfg: c}, nil
	})
	RegisterPlugin(EnvironPlugin, func(config []byte) (Plugin, error) {
		var vars map[string]string
		if err := json.Unmarshal(config, &vars); err != nil {
			return nil, fmt.Errorf("environ: configuration: %w", err)
		}
		return &environ{vars: vars}, nil
	})
}

// setupPlugin makes and sets up the plugin name, replacing one of the same
// name.
func (w *Worker) setupPlugin(ctx context.Context, name string, config []byte) error {
	f, ok := pluginFactory(name)
	if !ok {
		return fmt.Errorf("worker %s: no plugin %q is registered here (registered: %v)", w.addr, name, PluginNames())
	}
	p, err := f(config)
	if err != nil {
		return fmt.Errorf("worker %s: plugin %q: %w", w.addr, name, err)
	}
	env := &graph.Env{Registry: w.cfg.Registry, Logger: w.logger.With("plugin", name), Worker: w.addr, LocalDir: w.dir}
	if err := p.Setup(ctx, env); err != nil {
		w.logger.Warn("plugin setup failed", "plugin", name, "error", err)
		return fmt.Errorf("worker %s: plugin %q setup: %w", w.addr, name, err)
	}
	w.mu.Lock()
	old := w.plugins[name]
	if w.plugins == nil {
		w.plugins = map[string]Plugin{}
	}
	w.plugins[name] = p
	w.pluginList = w.pluginList[:0]
	for _, n := range slices.Sorted(maps.Keys(w.plugins)) {
		w.pluginList = append(w.pluginList, w.plugins[n])
	}
	w.mu.Unlock()
	if old != nil {
		if err := old.Teardown(ctx); err != nil {
			w.logger.Warn("plugin teardown failed", "plugin", name, "error", err)
		}
	}
	w.logger.Info("plugin set up", "plugin", name)
	return nil
}

// transition tells the plugins a task changed state. Called with w.mu
// held.
func (w *Worker) transition(k graph.Key, from, to string) {
	for _, p := range w.pluginList {
		p.Transition(k, from, to)
	}
}

// teardownPlugins runs every plugin's Teardown.
func (w *Worker) teardownPlugins() {
	w.mu.Lock()
	ps := w.plugins
	w.plugins, w.pluginList = nil, nil
	w.mu.Unlock()
	for name, p := range ps {
		if err := p.Teardown(context.Background()); err != nil {
			w.logger.Warn("plugin teardown failed", "plugin", name, "error", err)
		}
	}
}
