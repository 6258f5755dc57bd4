// Package testutil holds what the project's tests share.
package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// RequireTmpfs is the environment variable that makes Tmpfs fail a test
// instead of skipping it where it cannot mount one (CI sets it).
const RequireTmpfs = "SHOAL_REQUIRE_TMPFS"

// Tmpfs mounts a file system of size bytes in memory on a new directory
// of the test, to fill up, and unmounts it when the test ends. Where it
// cannot (not Linux, not root, no right to mount) it skips the test, or
// fails it when $SHOAL_REQUIRE_TMPFS is 1.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	cannot := func(why string) {
		t.Helper()
		if os.Getenv(RequireTmpfs) == "1" {
			t.Fatalf("cannot mount a tmpfs: %s (and %s=1)", why, RequireTmpfs)
		}
		t.Skipf("skipped: cannot mount a tmpfs to fill: %s; run as root on Linux, or set %s=1 to fail instead", why, RequireTmpfs)
	}
	if runtime.GOOS != "linux" {
		cannot(runtime.GOOS + " is not Linux")
	}
	if os.Geteuid() != 0 {
		cannot("not root")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		cannot(fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(out))))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
