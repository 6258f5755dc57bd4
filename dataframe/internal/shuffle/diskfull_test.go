package shuffle

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes for the test and returns its
// path, or skips the test when it cannot.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the disk-full test mounts a tmpfs: Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("the disk-full test mounts a small tmpfs, which needs root: run it as root (sudo go test -run DiskFull ./dataframe/internal/shuffle/)")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("the disk-full test could not mount a tmpfs (%v: %s); it needs root with the right to mount (CAP_SYS_ADMIN)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// When the disk fills up, a split and a sorted collect fail with a
// *DiskFullError that says what, where and how much; they leave no file
// behind; and the storage serves the next shuffle.
func TestDiskFull(t *testing.T) {
	dir := smallDisk(t, 256<<10)
	ctx := context.Background()
	mem := checkedMem(t)
	st := LocalStorage(dir)
	rng := rand.New(rand.NewPCG(12, 12))
	big := makeBatch(rng, mem, 0, 20000, 1000) // about 1.5 MB
	defer big.Release()
	for _, layout := range []Layout{FilePerInput, FilePerShard} {
		opts := Options{Budget: 64 << 10, Mem: mem, Layout: layout}
		_, err := Split(ctx, st, "full", 3, big, HashPartitioner("k"), 4, opts)
		var df *DiskFullError
		if !errors.As(err, &df) {
			t.Fatalf("%s: got %v, want a *DiskFullError", layout, err)
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s: %v is not syscall.ENOSPC", layout, err)
		}
		msg := err.Error()
		t.Logf("%s: %s", layout, msg)
		for _, want := range []string{"shuffle full", "split of input partition 3", "output partition " + strconv.Itoa(df.Output),
			df.Path, strconv.FormatInt(df.Written, 10) + " bytes written", "no space left on device"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q does not say %q", layout, msg, want)
			}
		}
		if df.Op != "split" || df.Input != 3 || df.Output < 0 || df.Output >= 4 || df.Written <= 0 || !strings.HasPrefix(df.Path, dir) {
			t.Errorf("%s: %+v", layout, df)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%s: files left after a full disk: %v", layout, f)
		}
		// The storage still works.
		small := makeBatch(rng, mem, 0, 500, 50)
		man, err := Split(ctx, st, "after", 0, small, HashPartitioner("k"), 2, opts)
		if err != nil {
			t.Fatalf("%s: split after a full disk: %v", layout, err)
		}
		out, err := Collect(ctx, st, "after", 1, []*Manifest{man}, testSchema, opts)
		if err != nil {
			t.Fatalf("%s: collect after a full disk: %v", layout, err)
		}
		if out.NumRows() != man.Outputs[1].Rows {
			t.Errorf("%s: %d rows, want %d", layout, out.NumRows(), man.Outputs[1].Rows)
		}
		out.Release()
		small.Release()
		if err := Cleanup(ctx, st, "after"); err != nil {
			t.Fatal(err)
		}
	}
	// A sorted collect whose runs do not fit beside the shards.
	mid := makeBatch(rng, mem, 0, 2000, 1000) // about 150 kB of shards
	defer mid.Release()
	opts := Options{Budget: 16 << 10, Mem: mem}
	man, err := Split(ctx, st, "spill", 0, mid, HashPartitioner("k"), 1, opts)
	if err != nil {
		t.Fatalf("split of %d bytes: %v", batchBytes(mid), err)
	}
	_, err = CollectSorted(ctx, st, "spill", 0, []*Manifest{man}, testSchema, []SortKey{{Column: "s"}}, opts)
	var df *DiskFullError
	if !errors.As(err, &df) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("sorted collect: got %v, want a *DiskFullError", err)
	}
	msg := err.Error()
	t.Logf("collect: %s", msg)
	for _, want := range []string{"shuffle spill", "collect of output partition 0", "sorted run", df.Path, "bytes written", "no space left on device"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	for _, f := range files(t, dir) {
		if strings.Contains(f, "run-") {
			t.Errorf("run file left after a full disk: %s", f)
		}
	}
	if err := Cleanup(ctx, st, "spill"); err != nil {
		t.Fatal(err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("files left after cleanup: %v", f)
	}
}
