package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/shoal-data/shoal/local"
)

// engine is one side of a case: how to run it and how to read its answer.
type engine struct {
	// setup runs once before the warm-up, untimed (load a table, persist a
	// frame). Optional.
	setup func(ctx context.Context) error
	// run computes the answer; this is what is timed.
	run func(ctx context.Context) (any, error)
	// answer turns what run returned into a comparable table and releases
	// it; untimed. A nil answer means the case has nothing to compare.
	// Optional: without it the value is dropped.
	answer func(ctx context.Context, v any) (*table, error)
	// teardown runs once after the last run. Optional.
	teardown func()
}

// benchCase is one row of the results.
type benchCase struct {
	suite, name string
	// note is shown in the note column (sizes, what is measured).
	note string
	// shoal is Shoal's side; nil when unsupported says why it cannot run.
	shoal       *engine
	unsupported string
	// peer is the other engine's side, named peerName; nil for none.
	peer     *engine
	peerName string
	// rate, if set, adds a rate computed from Shoal's median to the note
	// ("612k tasks/s").
	rate func(median time.Duration) string
}

func (c *benchCase) fullName() string { return c.suite + "/" + c.name }

// timing holds the durations of the timed runs.
type timing []time.Duration

func (t timing) sorted() timing {
	s := slices.Clone(t)
	slices.Sort(s)
	return s
}

func (t timing) median() time.Duration {
	s := t.sorted()
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (t timing) min() time.Duration { return slices.Min(t) }
func (t timing) max() time.Duration { return slices.Max(t) }

// caseResult is what running a case gave.
type caseResult struct {
	suite, name string
	peerName    string
	shoal, peer timing
	peakMem     int64  // bytes; -1 when not measured
	check       string // "ok", "FAIL", "error", "not supported yet: ...", "-"
	failed      bool
	detail      string // why it failed, in full
	note        string
}

// harness runs cases and holds what they share.
type harness struct {
	cfg    config
	duck   *duck
	exec   *local.Executor
	meter  peakMeter
	stderr io.Writer
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.stderr, format+"\n", args...)
}

// progressf logs the steps of a case with -v.
func (h *harness) progressf(format string, args ...any) {
	if h.cfg.verbose {
		h.logf("  "+format, args...)
	}
}

// runCase runs a case: the peer's warm-up gives the reference answer; then
// Shoal's warm-up is checked against it, then each side's timed runs, each
// preceded by a GC. Every Shoal run's answer is checked, outside the timed
// span; its peak memory is measured around the run alone.
func (h *harness) runCase(ctx context.Context, c *benchCase) caseResult {
	res := caseResult{suite: c.suite, name: c.name, peerName: c.peerName, peakMem: -1, note: c.note, check: "-"}
	fail := func(check string, err error) caseResult {
		res.check, res.failed, res.detail = check, true, err.Error()
		return res
	}
	var ref *table
	if c.peer != nil {
		var err error
		ref, res.peer, err = h.runPeer(ctx, c)
		if err != nil {
			return fail("error", fmt.Errorf("%s: %w", c.peerName, err))
		}
	}
	if c.shoal == nil {
		res.check = "not supported yet: " + c.unsupported
		return res
	}
	var err error
	res.shoal, res.peakMem, err = h.runShoal(ctx, c, ref)
	var mismatch *mismatchError
	switch {
	case errors.As(err, &mismatch):
		return fail("FAIL", err)
	case err != nil:
		return fail("error", fmt.Errorf("shoal: %w", err))
	case ref != nil:
		res.check = "ok"
	case c.shoal.answer != nil:
		res.check = "self-checked"
	}
	if c.rate != nil {
		r := c.rate(res.shoal.median())
		if res.note != "" {
			r = res.note + "; " + r
		}
		res.note = r
	}
	return res
}

// mismatchError is a wrong answer.
type mismatchError struct {
	run string
	err error
}

func (e *mismatchError) Error() string {
	return fmt.Sprintf("Shoal's answer (%s) differs from the peer's: %v", e.run, e.err)
}

func (h *harness) runPeer(ctx context.Context, c *benchCase) (*table, timing, error) {
	p := c.peer
	if p.teardown != nil {
		defer p.teardown()
	}
	if p.setup != nil {
		if err := p.setup(ctx); err != nil {
			return nil, nil, fmt.Errorf("setup: %w", err)
		}
	}
	start := time.Now()
	v, err := p.run(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.progressf("%s: %s warm-up %s", c.fullName(), c.peerName, fmtDuration(time.Since(start)))
	var ref *table
	if p.answer != nil {
		start := time.Now()
		if ref, err = p.answer(ctx, v); err != nil {
			return nil, nil, err
		}
		if ref != nil {
			h.progressf("%s: %s answer read (%s rows) in %s", c.fullName(), c.peerName, itoa(ref.rows()), fmtDuration(time.Since(start)))
		}
	}
	var t timing
	for range h.cfg.runs {
		runtime.GC()
		start := time.Now()
		v, err := p.run(ctx)
		d := time.Since(start)
		if err != nil {
			return nil, nil, err
		}
		h.progressf("%s: %s run %s", c.fullName(), c.peerName, fmtDuration(d))
		if p.answer != nil && ref == nil {
			// Nothing to compare with: still release the value.
			if _, err := p.answer(ctx, v); err != nil {
				return nil, nil, err
			}
		}
		t = append(t, d)
	}
	return ref, t, nil
}

func (h *harness) runShoal(ctx context.Context, c *benchCase, ref *table) (timing, int64, error) {
	s := c.shoal
	if s.teardown != nil {
		defer s.teardown()
	}
	if s.setup != nil {
		if err := s.setup(ctx); err != nil {
			return nil, -1, fmt.Errorf("setup: %w", err)
		}
	}
	check := func(run string, v any) error {
		if s.answer == nil {
			return nil
		}
		start := time.Now()
		got, err := s.answer(ctx, v)
		if err != nil {
			return err
		}
		if ref == nil || got == nil {
			return nil
		}
		if err := compareTables(got, ref); err != nil {
			return &mismatchError{run: run, err: err}
		}
		h.progressf("%s: shoal's answer of the %s checked in %s", c.fullName(), run, fmtDuration(time.Since(start)))
		return nil
	}
	start := time.Now()
	v, err := s.run(ctx)
	if err != nil {
		return nil, -1, err
	}
	h.progressf("%s: shoal warm-up %s", c.fullName(), fmtDuration(time.Since(start)))
	if err := check("warm-up run", v); err != nil {
		return nil, -1, err
	}
	var t timing
	peak := int64(-1)
	for i := range h.cfg.runs {
		stopProfile, err := h.startProfile(c, i)
		if err != nil {
			return nil, -1, err
		}
		h.meter.start()
		start := time.Now()
		v, err := s.run(ctx)
		d := time.Since(start)
		mem := h.meter.stop()
		if err := stopProfile(); err != nil {
			return nil, -1, err
		}
		if err != nil {
			return nil, -1, err
		}
		peak = max(peak, mem)
		h.progressf("%s: shoal run %s, peak memory %s", c.fullName(), fmtDuration(d), fmtBytes(mem))
		if err := check(fmt.Sprintf("timed run %d", i+1), v); err != nil {
			return nil, -1, err
		}
		t = append(t, d)
	}
	return t, peak, nil
}

// startProfile starts a CPU profile of one timed Shoal run when -cpuprofile
// asks for it.
func (h *harness) startProfile(c *benchCase, run int) (stop func() error, err error) {
	if h.cfg.cpuprofile == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(h.cfg.cpuprofile, 0o755); err != nil {
		return nil, err
	}
	name := strings.NewReplacer("/", "-", " ", "-").Replace(c.fullName())
	path := filepath.Join(h.cfg.cpuprofile, fmt.Sprintf("%s-run%d.pprof", name, run+1))
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
