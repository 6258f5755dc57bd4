package procmem

import (
	"os"
	"testing"
)

func TestRSSOf(t *testing.T) {
	n, ok := RSSOf(os.Getpid())
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skip("no /proc")
	}
	if !ok || n <= 0 {
		t.Fatalf("RSSOf(self) = %d, %v", n, ok)
	}
	if _, ok := RSSOf(1 << 30); ok {
		t.Error("RSSOf of a process that does not exist succeeded")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.50 KiB"}, {3 << 30, "3.00 GiB"}} {
		if got := Format(tc.n); got != tc.want {
			t.Errorf("Format(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
