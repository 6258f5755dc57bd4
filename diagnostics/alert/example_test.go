package alert_test

import (
	"fmt"
	"time"

	"github.com/shoal-data/shoal/diagnostics/alert"
)

func Example() {
	m := alert.New(alert.Config{})
	t0 := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

	// A worker reports that the file system of its directory is 95% full.
	report := &alert.WorkerReport{Worker: "10.0.0.7:40123", Disks: []alert.Disk{
		{Name: "local", Path: "/scratch/shoal-worker-1", Free: 50 << 20, Size: 1 << 30}}}
	for _, a := range m.Handle(t0, report) {
		fmt.Printf("raised %s: %s\n", a.Name, a.Message)
	}
	// Reported again, it is not raised again.
	fmt.Println(len(m.Handle(t0.Add(time.Second), report)), "new alerts")

	// Space was freed.
	report.Disks[0].Free = 600 << 20
	for _, a := range m.Handle(t0.Add(2*time.Second), report) {
		fmt.Printf("resolved %s after %v\n", a.Name, a.End.Sub(a.Start))
	}
	// Output:
	// raised disk-full: worker 10.0.0.7:40123: the file system of its local directory /scratch/shoal-worker-1 is 95% full, 50.00 MiB free of 1.00 GiB
	// 0 new alerts
	// resolved disk-full after 2s
}
