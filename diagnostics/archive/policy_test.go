package archive

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// name returns the file name of a file begun at t0 + sec seconds.
func name(sec int) string {
	return fmt.Sprintf("%s-x-%06d.parquet", t0.Add(time.Duration(sec)*time.Second).Format(timeLayout), sec)
}

func TestPolicyDue(t *testing.T) {
	tests := []struct {
		name string
		adds []struct{ table, rows, at int } // at: seconds after t0
		now  int
		all  bool
		want []int
	}{
		{name: "nothing buffered", now: 100, want: nil},
		{name: "not yet", adds: []struct{ table, rows, at int }{{0, 1, 0}}, now: 9, want: nil},
		{name: "interval over", adds: []struct{ table, rows, at int }{{0, 1, 0}}, now: 10, want: []int{0}},
		{name: "oldest row counts", adds: []struct{ table, rows, at int }{{1, 1, 0}, {1, 1, 8}}, now: 10,
			want: []int{1}},
		{name: "full", adds: []struct{ table, rows, at int }{{2, 5, 0}}, now: 1, want: []int{2}},
		{name: "all on flush", adds: []struct{ table, rows, at int }{{0, 1, 0}, {3, 1, 0}}, now: 1, all: true,
			want: []int{0, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPolicy(10*time.Second, 5, 0)
			for _, a := range tc.adds {
				p.add(a.table, a.rows, t0.Add(time.Duration(a.at)*time.Second))
			}
			if got := p.due(t0.Add(time.Duration(tc.now)*time.Second), tc.all); !slices.Equal(got, tc.want) {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPolicyWake(t *testing.T) {
	p := newPolicy(10*time.Second, 100, 0)
	if _, ok := p.wake(); ok {
		t.Fatal("wake with nothing buffered")
	}
	p.add(3, 1, t0.Add(5*time.Second))
	p.add(1, 1, t0.Add(2*time.Second))
	p.add(1, 1, t0.Add(7*time.Second))
	if at, ok := p.wake(); !ok || !at.Equal(t0.Add(12*time.Second)) {
		t.Errorf("wake = %v, %v; want t0+12s", at, ok)
	}
	p.taken(1)
	if at, ok := p.wake(); !ok || !at.Equal(t0.Add(15*time.Second)) {
		t.Errorf("after the first table was taken, wake = %v, %v; want t0+15s", at, ok)
	}
}

func TestPolicyRemovesOldestFirst(t *testing.T) {
	p := newPolicy(time.Second, 100, 100)
	// Files found on disk, out of order, of several tables.
	rm := p.found([]file{{table: 2, name: name(30), size: 30}, {table: 0, name: name(10), size: 30},
		{table: 4, name: name(20), size: 30}})
	if len(rm) != 0 {
		t.Fatalf("within the bound, found removed %v", rm)
	}
	rm = p.stored(file{table: 1, name: name(40), size: 30})
	if want := []file{{table: 0, name: name(10), size: 30}}; !slices.Equal(rm, want) {
		t.Errorf("stored removed %v, want %v", rm, want)
	}
	rm = p.stored(file{table: 1, name: name(50), size: 75})
	if want := []file{{table: 4, name: name(20), size: 30}, {table: 2, name: name(30), size: 30},
		{table: 1, name: name(40), size: 30}}; !slices.Equal(rm, want) {
		t.Errorf("stored removed %v, want %v", rm, want)
	}
	// A file larger than the bound goes too.
	rm = p.stored(file{table: 0, name: name(60), size: 101})
	if want := []file{{table: 1, name: name(50), size: 75}, {table: 0, name: name(60), size: 101}}; !slices.Equal(rm, want) {
		t.Errorf("stored removed %v, want %v", rm, want)
	}
	if err := p.check(); err != nil {
		t.Error(err)
	}
	if len(p.files) != 0 || p.total != 0 {
		t.Errorf("files %v, total %d; want none", p.files, p.total)
	}
}

func TestPolicyUnbounded(t *testing.T) {
	p := newPolicy(time.Second, 100, -1)
	for i := range 10 {
		if rm := p.stored(file{name: name(i), size: 1 << 40}); len(rm) > 0 {
			t.Fatalf("unbounded policy removed %v", rm)
		}
	}
}

// TestPolicySimulated runs random sequences of what can happen to an
// archive and checks, after every step, the policy's invariants and its
// promises: no row waits beyond the interval when the writer wakes when
// told, files go oldest first, and the files kept are within the bound.
func TestPolicySimulated(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		interval := time.Duration(rapid.IntRange(1, 20).Draw(rt, "interval")) * time.Second
		maxRows := rapid.IntRange(1, 50).Draw(rt, "maxRows")
		maxBytes := rapid.Int64Range(1, 1000).Draw(rt, "maxBytes")
		p := newPolicy(interval, maxRows, maxBytes)
		now := t0
		seq := 0
		kept := map[file]bool{} // what the simulated disk holds
		apply := func(rm []file, stepName string) {
			for _, f := range rm {
				if !kept[f] {
					rt.Fatalf("%s: removed %v, which is not kept", stepName, f)
				}
				delete(kept, f)
			}
			for _, r := range rm {
				for k := range kept {
					if k.compare(r) < 0 {
						rt.Fatalf("%s: removed %v but kept the older %v", stepName, r, k)
					}
				}
			}
		}
		for step := range 200 {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0: // rows arrive
				table := rapid.IntRange(0, len(Tables)-1).Draw(rt, "table")
				p.add(table, rapid.IntRange(1, 2*maxRows).Draw(rt, "rows"), now)
			case 1: // time passes, up to the next wake-up
				d := time.Duration(rapid.IntRange(0, 30).Draw(rt, "sleep")) * time.Second
				if at, ok := p.wake(); ok && at.Before(now.Add(d)) {
					d = max(at.Sub(now), 0)
				}
				now = now.Add(d)
			case 2: // the writer of this directory's other process wrote; a rescan finds it all
				fs := make([]file, 0, len(kept)+1)
				for f := range kept {
					fs = append(fs, f)
				}
				seq++
				other := file{table: rapid.IntRange(0, len(Tables)-1).Draw(rt, "otherTable"),
					name: fmt.Sprintf("%s-other-%06d.parquet", now.Format(timeLayout), seq),
					size: rapid.Int64Range(0, 300).Draw(rt, "otherSize")}
				kept[other] = true
				apply(p.found(append(fs, other)), "found")
			case 3: // nothing
			}
			// The writer writes what is due, as it does when it wakes.
			for _, table := range p.due(now, false) {
				since := p.pending[table].since
				if now.Sub(since) > interval {
					rt.Fatalf("step %d: table %d due %v after its first row, beyond the interval %v",
						step, table, now.Sub(since), interval)
				}
				p.taken(table)
				seq++
				f := file{table: table, name: fmt.Sprintf("%s-x-%06d.parquet", since.Format(timeLayout), seq),
					size: rapid.Int64Range(0, 300).Draw(rt, "size")}
				kept[f] = true
				apply(p.stored(f), "stored")
			}
			if at, ok := p.wake(); ok && !at.After(now) {
				rt.Fatalf("step %d: a table fell due at %v, but is not due at %v", step, at, now)
			}
			if err := p.check(); err != nil {
				rt.Fatalf("step %d: %v", step, err)
			}
			if len(kept) != len(p.files) {
				rt.Fatalf("step %d: the policy knows %d files, the disk holds %d", step, len(p.files), len(kept))
			}
			for _, pd := range p.pending {
				if pd.rows >= maxRows {
					rt.Fatalf("step %d: %d rows left buffered, a file holds %d", step, pd.rows, maxRows)
				}
			}
		}
	})
}
