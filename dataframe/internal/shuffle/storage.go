package shuffle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Storage holds the shards of shuffles: files named by slash-separated
// relative names ("shuffle-<id>/in-000003.arrows"). A split task writes
// them and a collect task reads ranges of them; on one machine they are
// files of a local directory (LocalStorage), in a cluster a worker serves
// its own to the others.
type Storage interface {
	// Create creates (or truncates) the file name, and its directory.
	Create(ctx context.Context, name string) (io.WriteCloser, error)
	// Open reads length bytes of the file name from offset.
	Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error)
	// Discard says a range of the file name will not be read again: the
	// storage may free its space (LocalStorage punches a hole, on Linux).
	Discard(ctx context.Context, name string, offset, length int64) error
	// Remove removes the file name; a missing file is no error.
	Remove(ctx context.Context, name string) error
	// RemoveAll removes the directory dir and everything in it; a missing
	// directory is no error.
	RemoveAll(ctx context.Context, dir string) error
	// Path says where the file name is, for messages.
	Path(name string) string
}

// PeerStorage is the storage of one worker of a cluster: the files it
// writes stay with it, and a collect on another worker reads them from it
// (Manifest.Worker says whose they are).
type PeerStorage interface {
	Storage
	// Self names this worker, as Manifest.Worker records it.
	Self() string
	// OpenPeer reads length bytes from offset of the file name that
	// worker wrote.
	OpenPeer(ctx context.Context, worker, name string, offset, length int64) (io.ReadCloser, error)
}

// LocalStorage keeps shards as files under dir (os.TempDir() when dir is
// ""), typically the executor's local directory (graph.Env.LocalDir).
func LocalStorage(dir string) Storage {
	if dir == "" {
		dir = os.TempDir()
	}
	return localStorage{dir: dir}
}

type localStorage struct{ dir string }

// checkName rejects names that would leave the storage's directory.
func checkName(name string) error {
	if name == "" || path.IsAbs(name) || strings.Contains(name, `\`) || path.Clean(name) != name ||
		name == ".." || strings.HasPrefix(name, "../") {
		return fmt.Errorf("shuffle storage: bad file name %q (want a clean relative name)", name)
	}
	return nil
}

func (s localStorage) Path(name string) string { return filepath.Join(s.dir, filepath.FromSlash(name)) }

func (s localStorage) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := s.Path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return os.Create(p)
}

// readBuffer is the buffer of a shard reader: Arrow IPC reads a message
// in several small reads.
const readBuffer = 256 << 10

func (s localStorage) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := os.Open(s.Path(name))
	if err != nil {
		return nil, err
	}
	sr := io.NewSectionReader(f, offset, length)
	return &fileReader{Reader: bufio.NewReaderSize(sr, int(min(readBuffer, max(length, 16)))), f: f}, nil
}

type fileReader struct {
	*bufio.Reader
	f *os.File
}

func (r *fileReader) Close() error { return r.f.Close() }

func (s localStorage) Discard(ctx context.Context, name string, offset, length int64) error {
	if err := checkName(name); err != nil {
		return err
	}
	f, err := os.OpenFile(s.Path(name), os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	err = punchHole(f, offset, length)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s localStorage) Remove(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := os.Remove(s.Path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (s localStorage) RemoveAll(ctx context.Context, dir string) error {
	if err := checkName(dir); err != nil {
		return err
	}
	return os.RemoveAll(s.Path(dir))
}
