package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

func constOp(name, sig string, v any) graph.Op {
	return graph.Op{Name: name, Signature: sig, Run: func(context.Context, graph.OpInput) (any, error) { return v, nil }}
}

func TestRegister(t *testing.T) {
	reg := graph.NewRegistry()
	if err := reg.Register(constOp("test.one", "v1", 1)); err != nil {
		t.Fatal(err)
	}
	err := reg.Register(constOp("test.one", "v2", 2))
	var de *graph.DuplicateOpError
	if !errors.As(err, &de) || de.Name != "test.one" {
		t.Fatalf("second Register = %v, want a *DuplicateOpError", err)
	}
	if !strings.Contains(err.Error(), `"test.one"`) {
		t.Errorf("error %q does not name the op", err)
	}
	if op, _ := reg.Lookup("test.one"); op.Signature != "v1" {
		t.Error("the failed Register replaced the op")
	}
	if err := reg.Register(graph.Op{Run: constOp("x", "", 0).Run}); err == nil {
		t.Error("Register of an op with no name: no error")
	}
	if err := reg.Register(graph.Op{Name: "test.norun"}); err == nil || !strings.Contains(err.Error(), "test.norun") {
		t.Errorf("Register of an op with no Run = %v", err)
	}
}

func TestRegistryChild(t *testing.T) {
	parent := graph.NewRegistry()
	if err := parent.Register(constOp("p.op", "v1", "p")); err != nil {
		t.Fatal(err)
	}
	child := parent.Child()
	if err := child.Register(constOp("c.op", "v1", "c")); err != nil {
		t.Fatal(err)
	}
	if _, ok := child.Lookup("p.op"); !ok {
		t.Error("child does not see the parent's op")
	}
	if _, err := child.Op("c.op"); err != nil {
		t.Error(err)
	}
	if _, ok := parent.Lookup("c.op"); ok {
		t.Error("parent sees the child's op")
	}
	// A child cannot shadow its parent's ops: workers would run the other one.
	var de *graph.DuplicateOpError
	if err := child.Register(constOp("p.op", "v2", "x")); !errors.As(err, &de) {
		t.Errorf("child.Register of a parent's op = %v, want a *DuplicateOpError", err)
	}
	// Ops registered in the parent after the child was made are seen too.
	if err := parent.Register(constOp("p.late", "v1", 0)); err != nil {
		t.Fatal(err)
	}
	if _, ok := child.Lookup("p.late"); !ok {
		t.Error("child does not see an op registered later in the parent")
	}
	// The default registry holds the built-ins; its children too.
	for _, name := range []string{graph.OpValue, graph.OpList, graph.OpAlias, graph.OpGetItem, graph.OpFused} {
		if _, ok := graph.Default().Child().Lookup(name); !ok {
			t.Errorf("built-in op %s is missing", name)
		}
	}
	if _, ok := graph.NewRegistry().Lookup(graph.OpValue); ok {
		t.Error("NewRegistry holds built-in ops")
	}
}

func TestUnknownOp(t *testing.T) {
	reg := graph.Default().Child()
	if _, ok := reg.Lookup("myapp.missing"); ok {
		t.Fatal("Lookup found an op that was never registered")
	}
	_, err := reg.Op("myapp.missing")
	var ue *graph.UnknownOpError
	if !errors.As(err, &ue) || ue.Op != "myapp.missing" {
		t.Fatalf("Op = %v, want an *UnknownOpError", err)
	}
	for _, s := range []string{`"myapp.missing"`, "graph.RegisterFunc", "register"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	withKey := &graph.UnknownOpError{Op: "x", Key: "x-1"}
	if !strings.Contains(withKey.Error(), `"x-1"`) {
		t.Errorf("error %q does not name the task", withKey)
	}
}

func TestSignaturesAndFingerprint(t *testing.T) {
	build := func(sig string, extra bool) *graph.Registry {
		reg := graph.Default().Child()
		if err := reg.Register(constOp("test.a", sig, 0)); err != nil {
			t.Fatal(err)
		}
		if extra {
			if err := reg.Register(constOp("test.b", "v1", 0)); err != nil {
				t.Fatal(err)
			}
		}
		return reg
	}
	base := build("v1", false)
	sigs := base.Signatures()
	if sigs["test.a"] != "v1" || sigs[graph.OpValue] == "" {
		t.Errorf("Signatures misses ops: test.a=%q value=%q", sigs["test.a"], sigs[graph.OpValue])
	}
	for _, c := range []string{"codec:int", "codec:list", "codec:arrow.record"} {
		if _, ok := sigs[c]; !ok {
			t.Errorf("Signatures misses %s", c)
		}
	}
	fp := base.Fingerprint()
	if len(fp) != 24 {
		t.Errorf("Fingerprint = %q, want 24 hex digits", fp)
	}
	if again := build("v1", false).Fingerprint(); again != fp {
		t.Errorf("same registrations, different fingerprints: %s, %s", fp, again)
	}
	if graph.FingerprintOf(sigs) != fp {
		t.Error("FingerprintOf(Signatures()) != Fingerprint()")
	}
	if build("v2", false).Fingerprint() == fp {
		t.Error("a changed signature keeps the fingerprint")
	}
	if build("v1", true).Fingerprint() == fp {
		t.Error("an added op keeps the fingerprint")
	}
	withCodec := build("v1", false)
	if err := withCodec.RegisterCodec(graph.GobCodec[point]()); err != nil {
		t.Fatal(err)
	}
	if withCodec.Fingerprint() == fp {
		t.Error("an added codec keeps the fingerprint")
	}
	// Signatures is a copy.
	sigs["test.a"] = "changed"
	if base.Fingerprint() != fp {
		t.Error("changing the map from Signatures changed the registry")
	}
}

func TestDiffSignatures(t *testing.T) {
	local := map[string]string{"same": "v1", "changed": "v1", "only.here": "v1"}
	remote := map[string]string{"same": "v1", "changed": "v2", "only.there": "v1"}
	got := graph.DiffSignatures(local, remote)
	if len(got) != 3 {
		t.Fatalf("DiffSignatures = %q, want 3 lines", got)
	}
	if !slices.IsSorted(got) {
		t.Errorf("not sorted: %q", got)
	}
	joined := strings.Join(got, "\n")
	for _, s := range []string{"changed", `"v1"`, `"v2"`, "only.here: registered here", "only.there: missing here"} {
		if !strings.Contains(joined, s) {
			t.Errorf("diff %q does not mention %s", joined, s)
		}
	}
	if strings.Contains(joined, "same") {
		t.Errorf("diff %q lists an op registered the same way", joined)
	}
	if d := graph.DiffSignatures(local, local); len(d) != 0 {
		t.Errorf("DiffSignatures of equal tables = %q", d)
	}
	// Both directions name the same ops.
	if back := graph.DiffSignatures(remote, local); len(back) != len(got) {
		t.Errorf("DiffSignatures(remote, local) = %q", back)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	reg := graph.Default().Child()
	const writers, opsEach = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range opsEach {
				name := fmt.Sprintf("conc.%d.%d", w, i)
				if err := reg.Register(constOp(name, "v1", i)); err != nil {
					t.Error(err)
					return
				}
				if _, ok := reg.Lookup(name); !ok {
					t.Errorf("%s not found right after Register", name)
				}
			}
		})
	}
	// Everybody registers the same op: exactly one wins.
	var wins sync.Map
	for w := range writers {
		wg.Go(func() {
			if err := reg.Register(constOp("conc.shared", "v1", w)); err == nil {
				wins.Store(w, true)
			}
		})
	}
	// Readers look up, fingerprint and encode meanwhile.
	for range 4 {
		wg.Go(func() {
			for i := range 300 {
				reg.Lookup(fmt.Sprintf("conc.0.%d", i%opsEach))
				if _, err := reg.Op(graph.OpValue); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					reg.Fingerprint()
				}
				if _, err := reg.MarshalValue(int64(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Typed registration also registers codecs concurrently.
	for w := range writers {
		wg.Go(func() {
			_, err := graph.RegisterFunc(fmt.Sprintf("conc.func.%d", w), func(_ context.Context, p point) (point, error) {
				return p, nil
			}, graph.InRegistry(reg))
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	n := 0
	wins.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d concurrent registrations of one name succeeded, want 1", n)
	}
	sigs := reg.Signatures()
	for w := range writers {
		for i := range opsEach {
			if _, ok := sigs[fmt.Sprintf("conc.%d.%d", w, i)]; !ok {
				t.Fatalf("conc.%d.%d lost", w, i)
			}
		}
	}
}

func TestSignaturesNameCodecTypes(t *testing.T) {
	// Two programs that register a codec under the same name for different
	// types do not get the same fingerprint.
	mk := func(c graph.Codec) *graph.Registry {
		reg := graph.Default().Child()
		if err := reg.RegisterCodec(c); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	r1 := mk(graph.NewCodec("myapp.v", func(point) ([]byte, error) { return nil, nil },
		func([]byte) (point, error) { return point{}, nil }))
	r2 := mk(graph.NewCodec("myapp.v", func(fileStats) ([]byte, error) { return nil, nil },
		func([]byte) (fileStats, error) { return fileStats{}, nil }))
	if r1.Fingerprint() == r2.Fingerprint() {
		t.Error("same fingerprint for codecs of different types")
	}
	d := graph.DiffSignatures(r1.Signatures(), r2.Signatures())
	if len(d) != 1 || !strings.Contains(d[0], "codec:myapp.v") || !strings.Contains(d[0], "graph_test.point") {
		t.Errorf("DiffSignatures = %q", d)
	}
}
