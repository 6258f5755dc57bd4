package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// The cost of the dashboard to the scheduler: BenchmarkDashboardCost runs
// a scheduler in a process of its own (this test binary started again),
// with the dashboard off and then on with a browser's worth of viewers
// (an event stream of every page's topics), drives it with 200 simulated
// workers and a client that computes 100,000 tasks per iteration, and
// compares the CPU time of the scheduler process.

// dashCostEnv makes the test binary a scheduler for the benchmark: "on"
// with the dashboard, "off" without.
const dashCostEnv = "SHOAL_DASHCOST_SCHEDULER"

// runDashCostScheduler serves a scheduler until its standard input
// closes, and prints its addresses as JSON first.
func runDashCostScheduler(mode string) {
	cfg := Config{Listen: "127.0.0.1:0", Insecure: true, HeartbeatTimeout: time.Minute}
	if mode == "on" {
		cfg.DashboardListen = "127.0.0.1:0"
	}
	s, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// SHOAL_DASHCOST_PROFILE=dir writes a CPU profile of each scheduler,
	// dir/scheduler-on.pprof and dir/scheduler-off.pprof.
	if dir := os.Getenv("SHOAL_DASHCOST_PROFILE"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, "scheduler-"+mode+".pprof")); err == nil {
			pprof.StartCPUProfile(f)
			defer func() {
				pprof.StopCPUProfile()
				f.Close()
			}()
		}
	}
	json.NewEncoder(os.Stdout).Encode(map[string]string{"grpc": s.Address(), "dashboard": s.DashboardAddress()})
	io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Close(ctx)
}

// schedulerProc is the scheduler's process.
type schedulerProc struct {
	cmd             *exec.Cmd
	stdin           io.Closer
	grpc, dashboard string
}

func startScheduler(b *testing.B, mode string) *schedulerProc {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=XXX")
	cmd.Env = append(os.Environ(), dashCostEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var addrs map[string]string
	if err := json.NewDecoder(bufio.NewReader(out)).Decode(&addrs); err != nil {
		cmd.Process.Kill()
		b.Fatal(err)
	}
	return &schedulerProc{cmd: cmd, stdin: stdin, grpc: addrs["grpc"], dashboard: addrs["dashboard"]}
}

func (p *schedulerProc) stop() {
	p.stdin.Close()
	p.cmd.Wait()
}

// cpu returns the CPU seconds the process has used, from /proc.
func (p *schedulerProc) cpu(b *testing.B) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks of 10 ms
}

var benchRegistry = &wire.Registry{Fingerprint: "dashboard-cost"}

// fakeWorker answers every task at once as computed, and heartbeats
// every second with numbers of its resources.
func fakeWorker(ctx context.Context, conn *grpc.ClientConn, i int) error {
	stream, err := wire.NewSchedulerClient(conn).WorkerStream(ctx)
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.2:%d", 20000+i)
	if err := stream.Send(&wire.WorkerUp{Msg: &wire.WorkerUp_Register{Register: &wire.RegisterWorker{Address: addr,
		Threads: 4, MemoryLimit: 8 << 30, Registry: benchRegistry, Pid: int32(100000 + i)}}}); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil { // welcome
		return err
	}
	out := make(chan *wire.WorkerBatch, 64)
	go func() {
		var epoch uint64
		for {
			m, err := stream.Recv()
			if err != nil {
				close(out)
				return
			}
			bt := m.GetBatch()
			if bt == nil {
				continue
			}
			if bt.Reset_ {
				epoch = bt.Epoch
			}
			now := time.Now().UnixNano()
			wb := &wire.WorkerBatch{Epoch: epoch, Pong: bt.Ping}
			for _, in := range bt.Instructions {
				if r := in.GetRun(); r != nil {
					wb.Done = append(wb.Done, &wire.TaskDone{Key: r.Key, Id: r.Id, StartUnixNano: now - 1e6,
						DurationNanos: 1e6, Size: 64})
				}
			}
			if len(wb.Done) > 0 || wb.Pong != 0 {
				out <- wb
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	cpu := 0.0
	for {
		select {
		case <-ctx.Done():
			return nil
		case wb, ok := <-out:
			if !ok {
				return nil
			}
			if err := stream.Send(&wire.WorkerUp{Msg: &wire.WorkerUp_Batch{Batch: wb}}); err != nil {
				return err
			}
		case <-tick.C:
			cpu += 0.5
			wb := &wire.WorkerBatch{Memory: &wire.Memory{Managed: 100 << 20, Process: 400 << 20},
				Stats: &wire.WorkerStats{CpuSeconds: cpu, Rss: 400 << 20, Fds: 40,
					Disks: []*wire.DiskUsage{{Name: "local", Path: "/tmp/w", Used: 1 << 20, Free: 10 << 30, Size: 20 << 30}},
					Tasks: map[string]int32{"executing": 4, "ready": 10, "memory": 100}},
				Metrics: []*wire.FineMetric{{Prefix: "leaf", Activity: "compute", Unit: "seconds", Value: 2}}}
			if err := stream.Send(&wire.WorkerUp{Msg: &wire.WorkerUp_Batch{Batch: wb}}); err != nil {
				return err
			}
		}
	}
}

// dashCostGraph is 100 groups of 999 leaves and the task that gathers
// them: 100,000 tasks, the 100 gatherers asked for.
func dashCostGraph(it int) ([]byte, []string) {
	g := graph.New()
	var keys []string
	for j := range 100 {
		deps := make([]graph.Key, 0, 999)
		for i := range 999 {
			k := graph.NewKey("leaf", fmt.Sprintf("%016x", it), j, i)
			g.Add(&graph.Task{Key: k, Op: "bench.leaf"})
			deps = append(deps, k)
		}
		k := graph.NewKey("gather", fmt.Sprintf("%016x", it), j)
		g.Add(&graph.Task{Key: k, Op: "bench.gather", Deps: deps})
		keys = append(keys, string(k))
	}
	b, err := graph.Encode(g)
	if err != nil {
		panic(err)
	}
	return b, keys
}

// computeOnce submits a graph and waits for its results.
func computeOnce(ctx context.Context, stream wire.Scheduler_ClientStreamClient, it int) error {
	gb, keys := dashCostGraph(it)
	name := fmt.Sprintf("c%d", it)
	if err := stream.Send(&wire.ClientUp{Msg: &wire.ClientUp_Batch{Batch: &wire.ClientBatch{
		Submit: []*wire.Submit{{Computation: name, Graph: gb, Keys: keys}}}}}); err != nil {
		return err
	}
	for got := 0; got < len(keys); {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		if bt := m.GetBatch(); bt != nil {
			if len(bt.Errors) > 0 {
				return fmt.Errorf("task %s failed: %v", bt.Errors[0].Key, bt.Errors[0].Error)
			}
			got += len(bt.Results)
		}
	}
	return stream.Send(&wire.ClientUp{Msg: &wire.ClientUp_Batch{Batch: &wire.ClientBatch{
		Release: []*wire.Release{{Computation: name}}}}})
}

// watch reads the dashboard's event stream of every page's topics until
// ctx is done.
func watch(ctx context.Context, dashboard string) error {
	topics := "status,task-window,workers,system,groups,logs,errors,profile,fine-metrics,bandwidth,shuffles"
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+dashboard+"/api/events?topics="+topics+"&window=5m", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/events: %s", resp.Status)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// benchCluster is a scheduler process, its simulated workers and a
// client's stream.
type benchCluster struct {
	p      *schedulerProc
	cancel context.CancelFunc
	wg     sync.WaitGroup
	conn   *grpc.ClientConn
	stream wire.Scheduler_ClientStreamClient
}

func startBenchCluster(b *testing.B, mode string) *benchCluster {
	c := &benchCluster{p: startScheduler(b, mode)}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	conn, err := grpc.NewClient(c.p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		b.Fatal(err)
	}
	c.conn = conn
	for i := range 200 {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := fakeWorker(ctx, conn, i); err != nil && ctx.Err() == nil {
				b.Error(err)
			}
		}()
	}
	sc := wire.NewSchedulerClient(conn)
	for {
		ci, err := sc.Info(ctx, &wire.InfoRequest{})
		if err != nil {
			b.Fatal(err)
		}
		if len(ci.Workers) == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if mode == "on" {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := watch(ctx, c.p.dashboard); err != nil {
				b.Error(err)
			}
		}()
	}
	if c.stream, err = sc.ClientStream(ctx); err != nil {
		b.Fatal(err)
	}
	if err := c.stream.Send(&wire.ClientUp{Msg: &wire.ClientUp_Register{Register: &wire.RegisterClient{Name: "bench",
		Registry: benchRegistry}}}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.stream.Recv(); err != nil {
		b.Fatal(err)
	}
	if err := computeOnce(ctx, c.stream, -1); err != nil { // warm up
		b.Fatal(err)
	}
	return c
}

func (c *benchCluster) stop() {
	c.stream.CloseSend()
	c.cancel()
	c.wg.Wait()
	c.conn.Close()
	c.p.stop()
}

// BenchmarkDashboardCost compares the CPU time of two scheduler
// processes running the same computations, one with the dashboard served
// and watched, one without, iteration by iteration in alternating order
// (so that the machine's drift falls on both): each iteration computes
// 100,000 tasks on each. It reports the CPU seconds of each per
// iteration and the dashboard's share of the scheduler's CPU,
// (on - off) / on.
func BenchmarkDashboardCost(b *testing.B) {
	if testing.Short() {
		b.Skip("starts two scheduler processes and 400 simulated workers")
	}
	clusters := map[string]*benchCluster{"off": startBenchCluster(b, "off"), "on": startBenchCluster(b, "on")}
	defer func() {
		for _, c := range clusters {
			c.stop()
		}
	}()
	cpu := map[string]float64{}
	ctx := context.Background()
	b.ResetTimer()
	for it := range b.N {
		order := []string{"off", "on"}
		if it%2 == 1 {
			order = []string{"on", "off"}
		}
		for _, mode := range order {
			c := clusters[mode]
			start := c.p.cpu(b)
			if err := computeOnce(ctx, c.stream, it); err != nil {
				b.Fatal(err)
			}
			cpu[mode] += c.p.cpu(b) - start
		}
	}
	b.StopTimer()
	b.ReportMetric(cpu["off"]/float64(b.N), "cpu-s/op-off")
	b.ReportMetric(cpu["on"]/float64(b.N), "cpu-s/op-on")
	b.ReportMetric(100*(cpu["on"]-cpu["off"])/cpu["on"], "%dashboard")
}
