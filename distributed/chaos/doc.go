// Package chaos holds the fault tests of a cluster: each runs a loop of
// shuffle-heavy jobs (a sort, a hash join, an exact median per group, and a
// set-index followed by a resample) on a LocalCluster while it injects one
// fault, and checks every job: its result must equal the one the local
// executor computes, or its error must be the one documented for that
// fault; a transport error, a wrong result or a job past its deadline (a
// hang) fails the test. After each fault it checks that nothing leaked:
// goroutines, file descriptors, worker processes, the executors' and
// workers' directories, and the Go heap.
//
// The faults: workers killed (SIGKILL) every few seconds; a worker
// stopped (SIGSTOP) for a minute; a full disk under the shuffle and spill
// files (a small tmpfs); memory limits of 250 and 600 MiB; the scheduler
// killed and restarted; two local executors and two clients of a cluster
// sharing a host and a directory; a fan-in of 200,000 tasks; 20 clients
// at once.
//
// The tests carry the build tag chaos, so that `go test ./...` leaves them
// out. The short form (about 15 seconds of jobs per fault), as CI runs it:
//
//	go test -tags chaos -count=1 ./distributed/chaos
//
// The long form runs each fault's loop for longer, and writes the counts
// of each fault as a line of JSON to a file:
//
//	SHOAL_CHAOS_REPORT=chaos.jsonl go test -tags chaos -count=1 -timeout 60m \
//		./distributed/chaos -chaos.duration=3m -v
//
// SHOAL_CHAOS_DURATION sets the duration too (the flag wins), and
// -chaos.seed the seed that picks the workers to kill. The full-disk fault
// mounts a tmpfs, which needs root on Linux: elsewhere it is skipped,
// unless SHOAL_REQUIRE_TMPFS=1 makes it fail.
package chaos
