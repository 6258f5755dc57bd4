package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The Parquet library decodes footers, page headers and page indexes
// (Thrift, compact protocol) trusting the sizes they declare: a damaged
// list or string length makes it allocate gigabytes. checkThrift walks the
// encoding first and checks every size against the bytes that are left.

var errThrift = errors.New("malformed metadata")

// checkThrift checks the struct at the start of b and returns its length.
func checkThrift(b []byte) (int, error) {
	c := thriftChecker{b: b}
	if err := c.structure(0); err != nil {
		return 0, fmt.Errorf("%w: %w at byte %d", ErrCorrupt, err, c.pos)
	}
	return c.pos, nil
}

type thriftChecker struct {
	b   []byte
	pos int
}

const maxThriftDepth = 64

func (c *thriftChecker) left() int { return len(c.b) - c.pos }

func (c *thriftChecker) byte() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, errThrift
	}
	c.pos++
	return c.b[c.pos-1], nil
}

func (c *thriftChecker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(c.b[c.pos:])
	if n <= 0 {
		return 0, errThrift
	}
	c.pos += n
	return v, nil
}

func (c *thriftChecker) skip(n uint64) error {
	if n > uint64(c.left()) {
		return fmt.Errorf("%w: %d bytes declared, %d left", errThrift, n, c.left())
	}
	c.pos += int(n)
	return nil
}

func (c *thriftChecker) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: nested too deep", errThrift)
	}
	for {
		h, err := c.byte()
		if err != nil {
			return err
		}
		if h == 0 { // stop
			return nil
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := c.uvarint(); err != nil {
				return err
			}
		}
		if err := c.value(h&0x0F, depth); err != nil {
			return err
		}
	}
}

func (c *thriftChecker) value(t byte, depth int) error {
	switch t {
	case 1, 2: // booleans in a field header
		return nil
	case 3: // byte
		return c.skip(1)
	case 4, 5, 6: // varints
		_, err := c.uvarint()
		return err
	case 7: // double
		return c.skip(8)
	case 8: // binary
		n, err := c.uvarint()
		if err != nil {
			return err
		}
		return c.skip(n)
	case 9, 10: // list, set
		h, err := c.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = c.uvarint(); err != nil {
				return err
			}
		}
		// Every element takes a byte at least.
		if n > uint64(c.left()) {
			return fmt.Errorf("%w: list of %d in %d bytes", errThrift, n, c.left())
		}
		et := h & 0x0F
		for range n {
			if et == 1 || et == 2 {
				if err := c.skip(1); err != nil { // booleans in lists take a byte
					return err
				}
				continue
			}
			if err := c.value(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := c.uvarint()
		if err != nil || n == 0 {
			return err
		}
		if 2*n > uint64(c.left()) {
			return fmt.Errorf("%w: map of %d in %d bytes", errThrift, n, c.left())
		}
		kv, err := c.byte()
		if err != nil {
			return err
		}
		for range n {
			for _, et := range []byte{kv >> 4, kv & 0x0F} {
				if et == 1 || et == 2 {
					if err := c.skip(1); err != nil {
						return err
					}
				} else if err := c.value(et, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case 12: // struct
		return c.structure(depth + 1)
	}
	return fmt.Errorf("%w: type %d", errThrift, t)
}
