package shuffle

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DefaultBudget is the memory budget of a split or collect task when
// Options.Budget is 0.
const DefaultBudget = 64 << 20

// Options tunes a shuffle. The zero value is usable; the split and collect
// tasks of a shuffle must use the same Layout. Options encode as JSON (for
// task params), all but Mem.
type Options struct {
	// Budget is the memory, in bytes of Arrow buffers, a split task fills
	// with partitioned rows before it writes them out as shards, and a
	// sorted collect sorts in memory before it spills a sorted run and
	// merges the runs from disk (default DefaultBudget). A task also holds
	// its input (a split) or its result (a collect returning one batch).
	Budget int64 `json:"budget,omitempty"`
	// Mem allocates the Arrow buffers (default memory.DefaultAllocator).
	Mem memory.Allocator `json:"-"`
	// Layout is how shards are laid out in files (default FilePerInput).
	Layout Layout `json:"layout,omitempty"`
	// Compression of the shard files: "" (none), "lz4" or "zstd".
	Compression string `json:"compression,omitempty"`
	// BatchRows is the most rows of a batch a SortedReader returns
	// (default 65536).
	BatchRows int `json:"batch_rows,omitempty"`
	// MergeFanIn is the most sorted runs a collect merges at once (default
	// 16); more runs are merged in several passes.
	MergeFanIn int `json:"merge_fan_in,omitempty"`
	// KeepShards keeps a collect from freeing its shards when it is done,
	// so that the output can be collected again.
	KeepShards bool `json:"keep_shards,omitempty"`
}

// Layout is how a split task lays its shards out in files.
type Layout uint8

const (
	// FilePerInput writes one file per split task, in which each flush of
	// the buffer adds one section (an Arrow IPC stream) per output; the
	// manifest says where each section is. Few files whatever the number
	// of outputs, sequential writes. A collect reads its sections and
	// frees their space (punches holes) when done; the files go at
	// Cleanup.
	FilePerInput Layout = iota
	// FilePerShard writes one file per (input, output) pair and flush:
	// N*M files or more, each written and closed at once (a split holds
	// one file open) and removed by the collect that reads it.
	FilePerShard
)

func (l Layout) String() string {
	switch l {
	case FilePerInput:
		return "file per input"
	case FilePerShard:
		return "file per shard"
	}
	return fmt.Sprintf("layout %d", uint8(l))
}

func (o Options) budget() int64 {
	if o.Budget <= 0 {
		return DefaultBudget
	}
	return o.Budget
}

func (o Options) mem() memory.Allocator {
	if o.Mem == nil {
		return memory.DefaultAllocator
	}
	return o.Mem
}

func (o Options) batchRows() int {
	if o.BatchRows <= 0 {
		return 1 << 16
	}
	return o.BatchRows
}

func (o Options) fanIn() int {
	if o.MergeFanIn < 2 {
		return 16
	}
	return o.MergeFanIn
}

func (o Options) check() error {
	switch o.Compression {
	case "", "lz4", "zstd":
	default:
		return fmt.Errorf("shuffle: unknown compression %q (want \"\", \"lz4\" or \"zstd\")", o.Compression)
	}
	if o.Layout > FilePerShard {
		return fmt.Errorf("shuffle: unknown %s", o.Layout)
	}
	return nil
}

// writerOptions are the options of an IPC writer of shards.
func (o Options) writerOptions() []ipc.Option {
	opts := []ipc.Option{ipc.WithAllocator(o.mem())}
	switch o.Compression {
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	}
	return opts
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$`)

// checkID rejects a shuffle id that cannot name a directory.
func checkID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("shuffle: bad shuffle id %q (want 1 to 200 letters, digits, '.', '_' or '-', not starting with '.' or '-')", id)
	}
	return nil
}

// Dir is the directory of a shuffle's files in its storage.
func Dir(shuffleID string) string { return "shuffle-" + shuffleID }

// ErrEnded is the error of a split whose shuffle was cleaned up while it
// ran; its files are removed.
var ErrEnded = errors.New("the shuffle was cleaned up while the split ran (its computation ended)")

// The names of a shuffle's files carry the attempt of the task that wrote
// them (newAttempt): a split or a collect that runs again, here or on
// another worker of a shared directory, never writes over the files of
// an earlier run, which a collect may still be reading.

func inputFile(id string, input int, attempt string) string {
	return fmt.Sprintf("%s/in-%06d-%s.arrows", Dir(id), input, attempt)
}

func shardFile(id string, input, output, segment int, attempt string) string {
	return fmt.Sprintf("%s/in-%06d-%s-out-%06d-%04d.arrows", Dir(id), input, attempt, output, segment)
}

func runFile(id string, output, run int, attempt string) string {
	return fmt.Sprintf("%s/out-%06d-%s-run-%04d.arrows", Dir(id), output, attempt, run)
}

// newAttempt names one run of a task: 8 random hexadecimal digits.
func newAttempt() string { return fmt.Sprintf("%08x", rand.Uint32()) }
