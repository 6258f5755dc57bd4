package diagnostics

import (
	"runtime"
	"strconv"
	"strings"
)

// shoalPrefix is the start of the names of Shoal's own functions: the
// module's path.
var shoalPrefix = func() string {
	pc, _, _, _ := runtime.Caller(0)
	name := runtime.FuncForPC(pc).Name() // ".../shoal/diagnostics.init.func1"
	i := strings.LastIndex(name, "/diagnostics.")
	return name[:i+1]
}()

// Caller returns where the program called into Shoal: the "file:line" of
// the innermost function of the calling goroutine's stack that is not
// Shoal's own (the functions of its examples and tests count as the
// program's), or "" when every frame is Shoal's. Executors call it when a
// computation is submitted, for ComputeStarted's Caller: it walks a few
// frames, a microsecond or so.
func Caller() string {
	var pcs [48]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && userFrame(f.Function, f.File) {
			return f.File + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// userFrame says whether a frame of function fn in file is the program's
// rather than Shoal's or the Go runtime's.
func userFrame(fn, file string) bool {
	switch {
	case strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "testing."):
		return false
	case !strings.HasPrefix(fn, shoalPrefix):
		return true
	}
	return strings.HasSuffix(file, "_test.go") || strings.HasPrefix(fn[len(shoalPrefix):], "examples/")
}
