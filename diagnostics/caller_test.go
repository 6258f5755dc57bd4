package diagnostics

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestCaller(t *testing.T) {
	_, file, line, _ := runtime.Caller(0)
	got := Caller()
	if want := file + ":" + strconv.Itoa(line+1); got != want {
		t.Errorf("Caller() = %q, want this line %q", got, want)
	}
}

// TestUserFrame tells the program's frames from Shoal's (those of
// executors are skipped through in local's and distributed's tests of
// their reports, which find the test's line).
func TestUserFrame(t *testing.T) {
	tests := []struct {
		fn, file string
		user     bool
	}{
		{"main.main", "/home/u/etl/main.go", true},
		{"example.com/etl/pipeline.Run", "/home/u/etl/pipeline/run.go", true},
		{shoalPrefix + "graph.Compute[...]", "/src/shoal/graph/compute.go", false},
		{shoalPrefix + "distributed.(*Client).Compute", "/src/shoal/distributed/client.go", false},
		{shoalPrefix + "dataframe.TestGroupBy", "/src/shoal/dataframe/groupby_test.go", true},
		{shoalPrefix + "examples/tutorial.main", "/src/shoal/examples/tutorial/main.go", true},
		{"runtime.goexit", "/go/src/runtime/asm_amd64.s", false},
		{"testing.tRunner", "/go/src/testing/testing.go", false},
	}
	for _, tc := range tests {
		if got := userFrame(tc.fn, tc.file); got != tc.user {
			t.Errorf("userFrame(%q, %q) = %v, want %v", tc.fn, tc.file, got, tc.user)
		}
	}
	if !strings.HasSuffix(shoalPrefix, "/shoal/") {
		t.Errorf("Shoal's functions start with %q", shoalPrefix)
	}
}

// BenchmarkCaller is what finding the program's line costs a
// submission, from a few frames deep.
func BenchmarkCaller(b *testing.B) {
	var s string
	for b.Loop() {
		s = nested(5)
	}
	_ = s
}

func nested(n int) string {
	if n == 0 {
		return Caller()
	}
	return nested(n - 1)
}
