package expr

import (
	"math"
	"time"
)

// zoneOffsets gives the UTC offset of a time zone at instants, from a table
// of the zone's transitions over the range of a column, so that a lookup is
// a comparison with the last period used or a binary search.
type zoneOffsets struct {
	loc    *time.Location
	lo, hi int64   // range of UTC seconds the table covers
	starts []int64 // starts of the periods, ascending
	offs   []int64 // offset (seconds east of UTC) in each period
	last   int     // period of the last lookup

	// Index by buckets of 2^bucketShift seconds from lo: the period at the
	// start of each bucket. A bucket holds at most one change of offset.
	bucket []int32
}

const bucketShift = 16 // about 18 hours

// Bounds of the transition table: outside, offsets are looked up one by one.
const (
	zoneTableMin = -5364662400 // 1800-01-01
	zoneTableMax = 7258118400  // 2200-01-01
)

func newZoneOffsets(loc *time.Location, minSec, maxSec int64) *zoneOffsets {
	z := &zoneOffsets{loc: loc, lo: max(minSec, zoneTableMin), hi: min(maxSec, zoneTableMax)}
	if z.lo > z.hi {
		return z
	}
	t := z.lo
	for {
		tt := time.Unix(t, 0).In(loc)
		_, off := tt.Zone()
		s, e := tt.ZoneBounds()
		start := int64(math.MinInt64)
		if !s.IsZero() {
			start = s.Unix()
		}
		if k := len(z.starts); k > 0 && start <= z.starts[k-1] {
			start = t // bounds of a period seen already (see below)
		}
		if k := len(z.starts); k == 0 || z.offs[k-1] != int64(off) {
			z.starts = append(z.starts, start)
			z.offs = append(z.offs, int64(off))
		}
		if e.IsZero() || e.Unix() > z.hi {
			break
		}
		if e.Unix() > t {
			t = e.Unix()
		} else {
			// The time package can report a period ending where it
			// starts (at the end of leap years, for zones whose future
			// rules are computed); step over it.
			t += 86400
		}
	}
	z.buildIndex()
	return z
}

// buildIndex builds the bucket index when the range is not too long and no
// two changes of offset fall in one bucket.
func (z *zoneOffsets) buildIndex() {
	nb := (z.hi-z.lo)>>bucketShift + 1
	if len(z.starts) < 2 || nb > 1<<20 {
		return
	}
	for k := 2; k < len(z.starts); k++ {
		if (z.starts[k]-z.lo)>>bucketShift == (z.starts[k-1]-z.lo)>>bucketShift {
			return
		}
	}
	z.bucket = make([]int32, nb)
	p := 0
	for b := range z.bucket {
		start := z.lo + int64(b)<<bucketShift
		for p+1 < len(z.starts) && z.starts[p+1] <= start {
			p++
		}
		z.bucket[b] = int32(p)
	}
}

// offset is the offset of the zone at UTC second sec.
func (z *zoneOffsets) offset(sec int64) int64 {
	if sec < z.lo || sec > z.hi || len(z.starts) == 0 {
		_, off := time.Unix(sec, 0).In(z.loc).Zone()
		return int64(off)
	}
	if z.bucket != nil {
		i := int(z.bucket[(sec-z.lo)>>bucketShift])
		if i+1 < len(z.starts) && sec >= z.starts[i+1] {
			i++
		}
		return z.offs[i]
	}
	i := z.last
	if sec >= z.starts[i] && (i+1 == len(z.starts) || sec < z.starts[i+1]) {
		return z.offs[i]
	}
	lo, hi := 0, len(z.starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if z.starts[m] <= sec {
			lo = m + 1
		} else {
			hi = m
		}
	}
	z.last = lo - 1
	return z.offs[lo-1]
}

// toUTC converts a wall-clock second to UTC. hint is the offset to try
// first: the offset of the instant the wall time was derived from, so that a
// time repeated by a backward transition keeps its side. A wall time skipped
// by a forward transition gives the instant of the transition.
func (z *zoneOffsets) toUTC(wall, hint int64) int64 {
	u1 := wall - hint
	o1 := z.offset(u1)
	if o1 == hint {
		return u1
	}
	u2 := wall - o1
	if z.offset(u2) == o1 {
		return u2
	}
	lo, hi := min(u1, u2), max(u1, u2)
	_, e := time.Unix(lo, 0).In(z.loc).ZoneBounds()
	if !e.IsZero() && e.Unix() <= hi {
		return e.Unix()
	}
	return hi
}
