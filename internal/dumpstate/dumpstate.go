// Package dumpstate writes the scheduling core's state in the format of
// a cluster dump (package diagnostics/dump), for both executors.
package dumpstate

import (
	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

// Scheduler returns the state of st: its tasks, workers, clients, counts
// and transition log. The caller holds what guards st, and fills the
// fields that are not the core's (address, id, logs).
func Scheduler(st *scheduler.State) dump.Scheduler {
	out := dump.Scheduler{Clock: st.Clock(), Tasks: []dump.Task{}, Workers: []dump.SchedulerWorker{},
		Clients: map[string][]string{}, Counts: map[string]int{}}
	for _, t := range st.Tasks() {
		out.Tasks = append(out.Tasks, dump.Task{Key: string(t.Key), Op: t.Op, State: t.State.String(),
			Priority: t.Priority, Deps: keys(t.Deps), WaitingOn: t.WaitingOn, Waiters: t.Waiters, WhoHas: t.Who,
			ProcessingOn: t.ProcessingOn, Bytes: t.Bytes, Clients: t.Clients, RetriesLeft: t.Retries, Error: t.Error})
	}
	for _, w := range st.Workers() {
		out.Workers = append(out.Workers, dump.SchedulerWorker{Address: w.Name, Threads: w.Threads,
			MemoryLimit: w.MemoryLimit, Resources: w.Resources, State: w.State.String(), Processing: w.Processing,
			Bytes: w.Bytes, Memory: dump.Memory{Managed: w.Memory.Managed, Process: w.Memory.Process,
				Spilled: w.Memory.Spilled}})
	}
	for c, ks := range st.Clients() {
		out.Clients[c] = keys(ks)
	}
	for s, n := range st.Counts() {
		out.Counts[s.String()] = n
	}
	out.Transitions = Transitions(st.Transitions())
	return out
}

// Transitions returns the core's transitions in the format of a dump.
func Transitions(ts []scheduler.Transition) []dump.Transition {
	out := make([]dump.Transition, len(ts))
	for i, t := range ts {
		out[i] = dump.Transition{Time: t.Time, Key: string(t.Key), From: t.From.String(), To: t.To.String(),
			Cause: t.Cause, Stimulus: t.Stimulus, Seq: t.Seq}
	}
	return out
}

func keys(ks []graph.Key) []string {
	if len(ks) == 0 {
		return nil
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}
