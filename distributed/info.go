package distributed

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/internal/units"
)

// Info describes a cluster as a client sees it.
type Info struct {
	Client           string // the client's id on the scheduler
	Connection       string // how the client reaches the scheduler: "tls://127.0.0.1:8786", or "tcp://..." in plaintext
	Scheduler        string // the scheduler's address
	SchedulerID      string
	DashboardAddress string // host:port (or URL) of the scheduler's dashboard; empty when it serves none. See DashboardURL
	MetricsAddress   string // host:port of the scheduler's Prometheus /metrics; empty when not served
	Workers          []WorkerInfo
	Threads          int   // of all workers
	Memory           int64 // memory limit of all workers, bytes; 0 when none has one
	Tasks            map[string]int
}

// WorkerInfo describes one worker.
type WorkerInfo struct {
	Address     string
	Name        string
	Threads     int
	MemoryLimit int64  // bytes; 0 means none
	Nanny       string // host:port of its nanny's control service; empty when it has no nanny
	LocalDir    string
	Resources   map[string]float64
	PID         int
	State       string // running, paused, closing
	Managed     int64  // bytes of results in memory
	Spilled     int64  // bytes of results on disk
	Process     int64  // bytes the process uses
	Metrics     string // host:port of its Prometheus /metrics; empty when not served
}

// Info asks the scheduler for the cluster's description. String prints
// the last one fetched. When the scheduler cannot be reached, the error
// matches ErrSchedulerLost.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	ci, err := wire.NewSchedulerClient(c.conn).Info(ctx, &wire.InfoRequest{})
	if err != nil {
		if status.Code(err) == codes.Unavailable {
			// Also what removing a shuffle's files on the workers meets
			// after a computation when the scheduler died: the user must
			// see the documented error, not the transport's.
			err = fmt.Errorf("%w: %w", ErrSchedulerLost, err)
		}
		return nil, fmt.Errorf("info from scheduler %s: %w", c.addr, err)
	}
	info := infoFromWire(ci)
	info.Client, info.Connection = c.id, c.scheme()+c.addr
	info.DashboardAddress = reachable(info.DashboardAddress, c.addr)
	c.mu.Lock()
	c.info = info
	c.mu.Unlock()
	return info, nil
}

// scheme is "tls://" when the client's connections use TLS, else "tcp://".
func (c *Client) scheme() string {
	switch {
	case c.cfg.security != nil && !c.cfg.security.Insecure,
		c.cfg.creds != nil && c.cfg.creds.Info().SecurityProtocol == "tls":
		return "tls://"
	}
	return "tcp://"
}

func infoFromWire(ci *wire.ClusterInfo) *Info {
	info := &Info{Scheduler: ci.Address, SchedulerID: ci.SchedulerId, DashboardAddress: ci.DashboardAddress,
		MetricsAddress: ci.MetricsAddress,
		Tasks:          map[string]int{}}
	for st, n := range ci.Tasks {
		info.Tasks[st] = int(n)
	}
	for _, w := range ci.Workers {
		wi := WorkerInfo{Address: w.Address, Name: w.Name, Threads: int(w.Threads), MemoryLimit: w.MemoryLimit,
			Nanny: w.Nanny, LocalDir: w.LocalDir, Resources: w.Resources, PID: int(w.Pid), State: w.State,
			Metrics: w.MetricsAddress}
		if m := w.Memory; m != nil {
			wi.Managed, wi.Spilled, wi.Process = m.Managed, m.Spilled, m.Process
		}
		info.Workers = append(info.Workers, wi)
		info.Threads += wi.Threads
		info.Memory += wi.MemoryLimit
	}
	slices.SortFunc(info.Workers, func(a, b WorkerInfo) int { return strings.Compare(a.Address, b.Address) })
	return info
}

// String prints the cluster's description the way the Dask tutorial shows
// a client: connection, scheduler, dashboard, totals, then one line per
// worker.
func (c *Client) String() string {
	c.mu.Lock()
	info := c.info
	c.mu.Unlock()
	if info == nil {
		return fmt.Sprintf("Client %s (scheduler %s)", c.id, c.addr)
	}
	return info.String()
}

func (i *Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Client %s\n", i.Client)
	fmt.Fprintf(&b, "  connection:  %s\n", i.Connection)
	fmt.Fprintf(&b, "  scheduler:   %s (%s)\n", i.Scheduler, i.SchedulerID)
	dash := i.DashboardURL()
	if dash == "" {
		dash = "none"
	}
	fmt.Fprintf(&b, "  dashboard:   %s\n", dash)
	if i.MetricsAddress != "" {
		fmt.Fprintf(&b, "  metrics:     http://%s/metrics\n", i.MetricsAddress)
	}
	fmt.Fprintf(&b, "  workers:     %d\n", len(i.Workers))
	fmt.Fprintf(&b, "  threads:     %d\n", i.Threads)
	fmt.Fprintf(&b, "  memory:      %s\n", formatBytes(i.Memory))
	for _, w := range i.Workers {
		nanny := w.Nanny
		if nanny == "" {
			nanny = "none"
		}
		fmt.Fprintf(&b, "  worker %s", w.Address)
		if w.Name != "" && w.Name != w.Address {
			fmt.Fprintf(&b, " (%s)", w.Name)
		}
		fmt.Fprintf(&b, ": threads %d, memory limit %s, nanny %s, local directory %s", w.Threads,
			formatBytes(w.MemoryLimit), nanny, w.LocalDir)
		if len(w.Resources) > 0 {
			names := make([]string, 0, len(w.Resources))
			for r := range w.Resources {
				names = append(names, r)
			}
			slices.Sort(names)
			var rs []string
			for _, r := range names {
				rs = append(rs, fmt.Sprintf("%s=%g", r, w.Resources[r]))
			}
			fmt.Fprintf(&b, ", resources %s", strings.Join(rs, ","))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// DashboardURL returns the address of the scheduler's dashboard, such
// as "http://127.0.0.1:8787/status", or "" when the scheduler serves no
// dashboard.
func (i *Info) DashboardURL() string { return dashboardURL(i.DashboardAddress) }

func dashboardURL(addr string) string {
	switch {
	case addr == "":
		return ""
	case strings.Contains(addr, "://"):
		return addr
	}
	return "http://" + addr + "/status"
}

// reachable returns addr with the host the client reached the scheduler
// at when addr's host is unspecified (":8787", "0.0.0.0:8787", "[::]:8787"):
// a dashboard served on every interface is served on that one too.
func reachable(addr, scheduler string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return addr
	}
	shost, _, err := net.SplitHostPort(scheduler)
	if err != nil || shost == "" {
		return addr
	}
	if ip := net.ParseIP(shost); ip != nil && ip.IsUnspecified() {
		return addr
	}
	return net.JoinHostPort(shost, port)
}

// formatBytes writes a byte count in binary units; 0 is "no limit".
func formatBytes(n int64) string {
	if n <= 0 {
		return "no limit"
	}
	return units.Bytes(n)
}
