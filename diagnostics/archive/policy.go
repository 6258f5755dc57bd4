package archive

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// file is a file of the archive as the policy knows it.
type file struct {
	table int    // index in Tables
	name  string // base name; names begin with a fixed-width UTC time, so they sort oldest first
	size  int64
}

func (f file) compare(g file) int {
	return cmp.Or(cmp.Compare(f.name, g.name), cmp.Compare(f.table, g.table))
}

// pending is what a table buffers: how many rows, since when.
type pending struct {
	rows  int
	since time.Time
}

// policy decides when the rows buffered for a table go to a file, and
// which files are removed to keep the archive within its size. It does no
// I/O and reads no clock: the Writer tells it what happened (rows added,
// rows taken, a file stored, the files found on disk) and carries out what
// it decides.
type policy struct {
	interval time.Duration // longest time a row waits in memory
	maxRows  int           // most rows in one file
	maxBytes int64         // bound of the files' total size; <= 0: none
	pending  []pending     // by table
	files    []file        // oldest first
	total    int64         // size of files
}

func newPolicy(interval time.Duration, maxRows int, maxBytes int64) *policy {
	return &policy{interval: interval, maxRows: maxRows, maxBytes: maxBytes, pending: make([]pending, len(Tables))}
}

// add counts n rows buffered for table t at now, and reports whether the
// table is due at once because it holds a file's worth of rows.
func (p *policy) add(t, n int, now time.Time) (full bool) {
	pd := &p.pending[t]
	if pd.rows == 0 {
		pd.since = now
	}
	pd.rows += n
	return pd.rows >= p.maxRows
}

// due returns the tables whose rows must go to a file at now: those with a
// file's worth of rows and those whose oldest row has waited the interval;
// every table with rows when all is set (on Flush and Close).
func (p *policy) due(now time.Time, all bool) []int {
	var out []int
	for t, pd := range p.pending {
		if pd.rows > 0 && (all || pd.rows >= p.maxRows || !now.Before(pd.since.Add(p.interval))) {
			out = append(out, t)
		}
	}
	return out
}

// taken notes that the rows of table t were taken to be written.
func (p *policy) taken(t int) { p.pending[t] = pending{} }

// wake returns when the next table falls due, if one has rows.
func (p *policy) wake() (time.Time, bool) {
	var at time.Time
	ok := false
	for _, pd := range p.pending {
		if pd.rows == 0 {
			continue
		}
		if due := pd.since.Add(p.interval); !ok || due.Before(at) {
			at, ok = due, true
		}
	}
	return at, ok
}

// stored notes a file written, and returns the files to remove, oldest
// first, to keep within the bound (the new file too, if the bound is
// smaller than it).
func (p *policy) stored(f file) []file {
	i, _ := slices.BinarySearchFunc(p.files, f, file.compare)
	p.files = slices.Insert(p.files, i, f)
	p.total += f.size
	return p.trim()
}

// found replaces the files known with those found on disk, and returns
// the files to remove, oldest first, to keep within the bound.
func (p *policy) found(fs []file) []file {
	p.files = slices.SortedFunc(slices.Values(fs), file.compare)
	p.total = 0
	for _, f := range p.files {
		p.total += f.size
	}
	return p.trim()
}

// trim forgets the oldest files until the rest are within the bound, and
// returns them.
func (p *policy) trim() []file {
	if p.maxBytes <= 0 {
		return nil
	}
	n := 0
	for n < len(p.files) && p.total > p.maxBytes {
		p.total -= p.files[n].size
		n++
	}
	if n == 0 {
		return nil
	}
	out := slices.Clone(p.files[:n])
	p.files = slices.Delete(p.files, 0, n)
	return out
}

// check verifies the policy's invariants; the tests call it after every
// step.
func (p *policy) check() error {
	var total int64
	for i, f := range p.files {
		total += f.size
		if i > 0 && p.files[i-1].compare(f) >= 0 {
			return fmt.Errorf("files out of order: %v before %v", p.files[i-1], f)
		}
	}
	if total != p.total {
		return fmt.Errorf("total %d, files add up to %d", p.total, total)
	}
	if p.maxBytes > 0 && p.total > p.maxBytes {
		return fmt.Errorf("total %d over the bound %d", p.total, p.maxBytes)
	}
	for t, pd := range p.pending {
		if pd.rows < 0 || (pd.rows == 0) != pd.since.IsZero() {
			return fmt.Errorf("table %s: %d rows pending since %v", Tables[t], pd.rows, pd.since)
		}
	}
	return nil
}
