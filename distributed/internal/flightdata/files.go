package flightdata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shoal-data/shoal/internal/ended"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Files that tasks write in a worker's scratch directory for other workers
// to read (shuffle shards) travel with two actions: ActionReadFile streams
// a byte range of one, ActionRemoveDirs removes directories of them when
// the computation that made them has ended. Only names under directories
// whose name starts with FilePrefix are served, so the rest of the
// worker's disk stays out of reach.
const (
	ActionReadFile   = "shoal.read-file"
	ActionRemoveDirs = "shoal.remove-dirs"
	FilePrefix       = "shuffle-"
)

// fileChunk is the most bytes of a file sent in one result.
const fileChunk = 4 << 20

// FileRange is the body of ActionReadFile.
type FileRange struct {
	Name   string `json:"name"` // slash-separated, relative to the scratch directory
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

// removeDirs is the body of ActionRemoveDirs.
type removeDirs struct {
	Dirs []string `json:"dirs"`
}

// CheckFileName rejects names outside the served directories.
func CheckFileName(name string) error {
	if !filepath.IsLocal(filepath.FromSlash(name)) || strings.Contains(name, `\`) || !strings.HasPrefix(name, FilePrefix) {
		return fmt.Errorf("file name %q is not a clean relative name under a %s* directory", name, FilePrefix)
	}
	return nil
}

// ServeReadFile answers ActionReadFile from the files under dir.
func ServeReadFile(a *flight.Action, stream flight.FlightService_DoActionServer, dir string) error {
	var r FileRange
	if err := json.Unmarshal(a.Body, &r); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %v", ActionReadFile, err)
	}
	if err := CheckFileName(r.Name); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %v", ActionReadFile, err)
	}
	if r.Offset < 0 || r.Length < 0 {
		return status.Errorf(codes.InvalidArgument, "%s: %s: bad range %d+%d", ActionReadFile, r.Name, r.Offset, r.Length)
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(r.Name)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return status.Errorf(codes.NotFound, "%s: %v", ActionReadFile, err)
		}
		return status.Errorf(codes.Internal, "%s: %v", ActionReadFile, err)
	}
	defer f.Close()
	for off, end := r.Offset, r.Offset+r.Length; off < end; {
		// A new buffer each time: gRPC may still hold the last message.
		buf := make([]byte, min(end-off, fileChunk))
		n, err := f.ReadAt(buf, off)
		if n > 0 {
			if err := stream.Send(&flight.Result{Body: buf[:n]}); err != nil {
				return err
			}
			off += int64(n)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return status.Errorf(codes.OutOfRange, "%s: %s ends at byte %d, before %d", ActionReadFile, r.Name, off, end)
			}
			return status.Errorf(codes.Internal, "%s: %v", ActionReadFile, err)
		}
	}
	return nil
}

// ReadFile returns a reader of a byte range of a file in the scratch
// directory of the worker c reaches. Close it when done.
func ReadFile(ctx context.Context, c flight.FlightServiceClient, r FileRange) (io.ReadCloser, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.DoAction(ctx, &flight.Action{Type: ActionReadFile, Body: body}, grpc.MaxCallRecvMsgSize(MaxMessageBytes))
	if err != nil {
		cancel()
		return nil, err
	}
	return &fileStream{stream: stream, cancel: cancel, left: r.Length}, nil
}

// fileStream reads the results of ActionReadFile as one byte stream.
type fileStream struct {
	stream flight.FlightService_DoActionClient
	cancel context.CancelFunc
	buf    []byte
	left   int64 // bytes still to come
	err    error
}

func (s *fileStream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.left == 0 {
			return 0, io.EOF
		}
		r, err := s.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%s: the stream ended %d bytes early", ActionReadFile, s.left)
			}
			s.err = err
			return 0, err
		}
		if int64(len(r.Body)) > s.left {
			s.err = fmt.Errorf("%s: %d bytes more than asked for", ActionReadFile, int64(len(r.Body))-s.left)
			return 0, s.err
		}
		s.buf = r.Body
		s.left -= int64(len(r.Body))
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func (s *fileStream) Close() error {
	s.cancel()
	return nil
}

// ServeRemoveDirs answers ActionRemoveDirs for the directories under dir.
func ServeRemoveDirs(a *flight.Action, stream flight.FlightService_DoActionServer, dir string) error {
	var req removeDirs
	if err := json.Unmarshal(a.Body, &req); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %v", ActionRemoveDirs, err)
	}
	var errs []error
	for _, d := range req.Dirs {
		if err := CheckFileName(d); err != nil {
			return status.Errorf(codes.InvalidArgument, "%s: %v", ActionRemoveDirs, err)
		}
		// For tasks still writing there: a shuffle's split that started
		// before removes its files when it ends.
		p := filepath.Join(dir, filepath.FromSlash(d))
		ended.Mark(p)
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return status.Errorf(codes.Internal, "%s: %v", ActionRemoveDirs, err)
	}
	return stream.Send(&flight.Result{})
}

// RemoveDirs removes directories of files from the scratch directory of
// the worker c reaches.
func RemoveDirs(ctx context.Context, c flight.FlightServiceClient, dirs []string) error {
	body, err := json.Marshal(removeDirs{Dirs: dirs})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.DoAction(ctx, &flight.Action{Type: ActionRemoveDirs, Body: body})
	if err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// DecodeFileRange decodes the body of ActionReadFile.
func DecodeFileRange(body []byte, r *FileRange) error { return json.Unmarshal(body, r) }
