package distributed

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoal-data/shoal/distributed/internal/flightdata"
)

// RemoveWorkerFiles removes directories that tasks made in the local
// directories of the workers (those of shuffles, whose names start with
// "shuffle-"; others are refused). Dataframe computations call it when
// they end, so that their shuffle files do not outlive them.
func (c *Client) RemoveWorkerFiles(ctx context.Context, dirs []string) error {
	for _, d := range dirs {
		if err := flightdata.CheckFileName(d); err != nil {
			return fmt.Errorf("remove worker files: %w", err)
		}
	}
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("remove worker files: %w", err)
	}
	var errs []error
	for _, w := range info.Workers {
		conn, err := c.peers.Get(w.Address)
		if err == nil {
			err = flightdata.RemoveDirs(ctx, flight.NewFlightServiceClient(conn), dirs)
		}
		if err != nil && status.Code(err) != codes.Unavailable { // a worker that just left took its directory along
			errs = append(errs, fmt.Errorf("remove files on worker %s: %w", w.Address, err))
		}
	}
	return errors.Join(errs...)
}
