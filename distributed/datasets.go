package distributed

import (
	"context"
	"fmt"

	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
)

// PublishDataset names the futures' values on the scheduler, so that they
// stay on the workers after this client releases them or leaves, and other
// clients can get them with GetDataset. It waits until they are computed.
// Publishing a name that exists fails unless overwrite.
func (c *Client) PublishDataset(ctx context.Context, name string, fs []*Future, overwrite bool) error {
	if err := c.Wait(ctx, fs...); err != nil {
		return fmt.Errorf("publish %q: %w", name, err)
	}
	keys := make([]string, len(fs))
	for i, f := range fs {
		if err := f.Err(); err != nil {
			return fmt.Errorf("publish %q: %w", name, err)
		}
		keys[i] = string(f.key)
	}
	_, err := wire.NewSchedulerClient(c.conn).Publish(ctx, &wire.PublishRequest{Name: name, Keys: keys,
		Overwrite: overwrite, Client: c.id})
	if err != nil {
		return fmt.Errorf("publish %q: %w", name, err)
	}
	return nil
}

// GetDataset returns futures for the values of a published dataset.
func (c *Client) GetDataset(ctx context.Context, name string) ([]*Future, error) {
	d, err := wire.NewSchedulerClient(c.conn).GetDataset(ctx, &wire.DatasetRequest{Name: name})
	if err != nil {
		return nil, fmt.Errorf("get dataset %q: %w", name, err)
	}
	g := graph.New()
	keys := make([]graph.Key, len(d.Keys))
	for i, k := range d.Keys {
		keys[i] = graph.Key(k)
	}
	g.AddExternal(keys...)
	comp, err := c.submit(ctx, g, keys, false)
	if err != nil {
		return nil, fmt.Errorf("get dataset %q: %w", name, err)
	}
	return comp.futures, nil
}

// ListDatasets returns the names of the published datasets, sorted.
func (c *Client) ListDatasets(ctx context.Context) ([]string, error) {
	l, err := wire.NewSchedulerClient(c.conn).ListDatasets(ctx, &wire.InfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	return l.Names, nil
}

// UnpublishDataset forgets a dataset: its values are released unless a
// client holds them.
func (c *Client) UnpublishDataset(ctx context.Context, name string) error {
	if _, err := wire.NewSchedulerClient(c.conn).Unpublish(ctx, &wire.DatasetRequest{Name: name}); err != nil {
		return fmt.Errorf("unpublish %q: %w", name, err)
	}
	return nil
}
