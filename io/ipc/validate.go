package ipc

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// validate checks that an array read from a file is consistent, so that
// using it cannot index outside its buffers: validity bitmaps long
// enough, offsets of strings and lists inside their data, dictionary
// indices inside their dictionary.
func validate(a arrow.Array, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested more than %d deep", maxDepth)
	}
	d := a.Data()
	end := d.Offset() + d.Len()
	if d.Offset() < 0 || d.Len() < 0 {
		return fmt.Errorf("negative offset or length")
	}
	bufs := d.Buffers()
	if len(bufs) > 0 && bufs[0] != nil && bufs[0].Len() < int(bitutil.BytesForBits(int64(end))) {
		return fmt.Errorf("the validity bitmap of %d bytes is too short for %d values", bufs[0].Len(), end)
	}
	switch a := a.(type) {
	case *array.Boolean:
		if len(bufs) < 2 || bufs[1] == nil && end > 0 || bufs[1] != nil && bufs[1].Len() < int(bitutil.BytesForBits(int64(end))) {
			return fmt.Errorf("the values of a bool column are too short for %d values", end)
		}
	case *array.Dictionary:
		if err := validate(a.Dictionary(), depth+1); err != nil {
			return fmt.Errorf("dictionary: %w", err)
		}
		n := a.Dictionary().Len()
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				if j := a.GetValueIndex(i); j < 0 || j >= n {
					return fmt.Errorf("dictionary index %d at row %d is outside the dictionary of %d values", j, i, n)
				}
			}
		}
		return nil
	case interface{ ValidateFull() error }:
		if err := a.ValidateFull(); err != nil {
			return err
		}
	}
	for i, c := range d.Children() {
		child := array.MakeFromData(c)
		err := validate(child, depth+1)
		child.Release()
		if err != nil {
			return fmt.Errorf("child %d: %w", i, err)
		}
	}
	return nil
}
