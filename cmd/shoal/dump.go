package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
)

// The post-mortem commands: shoal dump inspect|story|tasks, and shoal
// dashboard --dump, which read a cluster dump (Client.DumpClusterState).

const dumpUsage = `Usage:
  shoal dump inspect FILE [--stuck-after 1m]   the workers, the erred and stuck tasks, the memory
  shoal dump story FILE KEY...                 how tasks came to be where they are
  shoal dump tasks FILE [--state STATE] [--worker ADDR] [--prefix PREFIX]
                                               the tasks the scheduler held

FILE is a cluster dump, written by distributed.Client.DumpClusterState (or
local.Executor.DumpClusterState). shoal dashboard --dump FILE serves the
dashboard's pages from one.
`

// runDump runs shoal dump.
func runDump(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, dumpUsage)
		return errUsage
	}
	switch args[0] {
	case "inspect":
		return dumpInspect(args[1:], stdout, stderr)
	case "story":
		return dumpStory(args[1:], stdout, stderr)
	case "tasks":
		return dumpTasks(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stderr, dumpUsage)
		return flag.ErrHelp
	}
	fmt.Fprintf(stderr, "shoal dump: unknown command %q\n\n%s", args[0], dumpUsage)
	return errUsage
}

// parseAll parses flags that may come before or after the positional
// arguments, and returns those.
func parseAll(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// dumpFlags are the flags of a dump command taking FILE and more
// arguments.
func dumpFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("shoal dump "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: shoal dump %s\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

func dumpInspect(args []string, stdout, stderr io.Writer) error {
	fs := dumpFlags("inspect", "inspect FILE [flags]\n\nPrints the workers, the erred and stuck tasks and the memory of a cluster dump.\n", stderr)
	after := fs.Duration("stuck-after", time.Minute, "a task a worker runs, or waits for the inputs of, for longer looks stuck")
	pos, err := parseAll(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	f, err := dump.Read(pos[0])
	if err != nil {
		return err
	}
	sc := f.Scheduler
	fmt.Fprintf(stdout, "cluster dump of %s (format version %d, %s)\n", f.Time.Format(time.RFC3339), f.Version, f.Executor)
	fmt.Fprintf(stdout, "scheduler %s (%s), started %s\n", sc.Address, sc.ID, sc.Started.Format(time.RFC3339))
	fmt.Fprintf(stdout, "tasks: %s\n", counts(sc.Counts))

	byAddr := map[string]dump.SchedulerWorker{}
	for _, w := range sc.Workers {
		byAddr[w.Address] = w
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tNAME\tSTATE\tTHREADS\tMANAGED\tPROCESS\tSPILLED\tLIMIT\tPROCESSING\tNOTE")
	for _, w := range f.Workers {
		sw, connected := byAddr[w.Address]
		state, note := sw.State, ""
		switch {
		case w.Gone:
			state, note = "gone", w.Reason
		case w.Error != "":
			note = "did not answer: " + w.Error
		case w.State != nil && w.State.Paused:
			note = "paused: memory above the pause threshold"
		}
		if !connected && !w.Gone {
			state = "?"
		}
		limit := "none"
		if sw.MemoryLimit > 0 {
			limit = formatBytes(sw.MemoryLimit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\n", w.Address, w.Name, state, sw.Threads,
			formatBytes(sw.Memory.Managed), formatBytes(sw.Memory.Process), formatBytes(sw.Memory.Spilled), limit,
			sw.Processing, note)
	}
	tw.Flush()

	workerOf := map[string]string{}
	if f.Dashboard != nil && f.Dashboard.Errors != nil {
		for _, e := range f.Dashboard.Errors.Errors {
			workerOf[e.Key] = e.Worker
		}
	}
	var erred []dump.Task
	for _, t := range sc.Tasks {
		if t.State == "erred" {
			erred = append(erred, t)
		}
	}
	fmt.Fprintf(stdout, "\nerred tasks: %d\n", len(erred))
	for _, t := range erred {
		where := ""
		if w := workerOf[t.Key]; w != "" {
			where = " on " + w
		}
		fmt.Fprintf(stdout, "  %s (op %s)%s\n      %s\n", t.Key, t.Op, where, strings.ReplaceAll(t.Error, "\n", "\n      "))
	}
	stuck := f.Stuck(*after)
	fmt.Fprintf(stdout, "\nstuck tasks: %d\n", len(stuck))
	for _, s := range stuck {
		where := ""
		if s.Worker != "" {
			where = " on " + s.Worker
		}
		fmt.Fprintf(stdout, "  %s (%s%s): %s\n", s.Key, s.State, where, s.Why)
	}
	return nil
}

// counts writes tasks by state, the most first.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	type sc struct {
		state string
		n     int
	}
	var all []sc
	for s, n := range m {
		all = append(all, sc{s, n})
	}
	slices.SortFunc(all, func(a, b sc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.state, b.state)) })
	parts := make([]string, len(all))
	for i, x := range all {
		parts[i] = fmt.Sprintf("%d %s", x.n, x.state)
	}
	return strings.Join(parts, ", ")
}

func dumpStory(args []string, stdout, stderr io.Writer) error {
	fs := dumpFlags("story", "story FILE KEY...\n\nPrints the transitions of the keys on the scheduler and on the workers, oldest first.\n", stderr)
	pos, err := parseAll(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		fs.Usage()
		return errUsage
	}
	f, err := dump.Read(pos[0])
	if err != nil {
		return err
	}
	story := f.Story(pos[1:]...)
	if len(story) == 0 {
		return fmt.Errorf("%s: no transition of %s: the dump keeps the last transitions only", pos[0],
			strings.Join(pos[1:], ", "))
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tWHERE\tKEY\tFROM\tTO\tCAUSE\tERROR")
	for _, t := range story {
		where := t.Worker
		if where == "" {
			where = "scheduler"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Time.Format("15:04:05.000000"), where, t.Key, t.From,
			t.To, t.Cause, strings.ReplaceAll(t.Error, "\n", " "))
	}
	return tw.Flush()
}

// schedulerStates are the states of tasks on the scheduler.
var schedulerStates = []string{"released", "waiting", "queued", "processing", "memory", "erred", "cancelled"}

func dumpTasks(args []string, stdout, stderr io.Writer) error {
	fs := dumpFlags("tasks", "tasks FILE [flags]\n\nPrints the tasks the scheduler held, by key.\n", stderr)
	state := fs.String("state", "", "only the tasks in this `state`: "+strings.Join(schedulerStates, ", "))
	worker := fs.String("worker", "", "only the tasks processing on, or held by, this worker (`address`)")
	prefix := fs.String("prefix", "", "only the tasks of this key `prefix`")
	pos, err := parseAll(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	if *state != "" && !slices.Contains(schedulerStates, *state) {
		return fmt.Errorf("--state %q: want one of %s", *state, strings.Join(schedulerStates, ", "))
	}
	f, err := dump.Read(pos[0])
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATE\tOP\tWORKERS\tBYTES\tERROR")
	n := 0
	for _, t := range f.Scheduler.Tasks {
		workers := t.WhoHas
		if t.ProcessingOn != "" {
			workers = []string{t.ProcessingOn}
		}
		if *state != "" && t.State != *state || *worker != "" && !slices.Contains(workers, *worker) ||
			*prefix != "" && !strings.HasPrefix(t.Key, *prefix) {
			continue
		}
		n++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", t.Key, t.State, t.Op, strings.Join(workers, ","), t.Bytes,
			strings.ReplaceAll(t.Error, "\n", " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no task matches")
	}
	return nil
}

// runDashboard runs shoal dashboard --dump FILE: the dashboard's pages of
// a dump, until ctx is done.
func runDashboard(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("shoal dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("dump", "", "the cluster dump `file` to show (written by Client.DumpClusterState)")
	listen := fs.String("listen", "127.0.0.1:8787", "`address` to serve the pages on (host:port; port 0 picks a free one)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: shoal dashboard --dump FILE [--listen HOST:PORT]\n\n"+
			"Serves the dashboard's pages from a cluster dump, for the post-mortem of a cluster\n"+
			"that is gone, until interrupted. The pages show the cluster as it was when dumped.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	f, err := dump.Read(*file)
	if err != nil {
		return err
	}
	if f.Dashboard == nil {
		return fmt.Errorf("%s: the dump has no data for the dashboard", *file)
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: dashboard.FileHandler(f.Dashboard), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "shoal dashboard: the cluster of %s, as dumped at %s: http://%s/status\n", *file,
		f.Time.Format(time.RFC3339), lis.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	<-done
	return nil
}

// formatBytes writes a size in binary units.
func formatBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n)/1024, 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, units[u])
}
