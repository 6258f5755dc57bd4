// Package pace coalesces the messages of a stream: a sender that was idle
// sends at once, one that sent a moment ago waits out a short interval so
// that what piles up meanwhile goes in one message. Thousands of small
// tasks then cost hundreds of messages, not thousands, while a lone task
// is not delayed at all.
package pace

import (
	"context"
	"time"
)

// DefaultInterval is the shortest time between two messages of a stream
// under load.
const DefaultInterval = time.Millisecond

// Pacer spaces the sends of one stream. It is not safe for concurrent use:
// each sending goroutine has its own.
type Pacer struct {
	interval time.Duration
	last     time.Time
	timer    *time.Timer
	now      func() time.Time                     // time.Now, or a test's clock
	after    func(time.Duration) <-chan time.Time // nil: the pacer's timer
}

// New returns a pacer that keeps interval between sends (none if interval
// <= 0).
func New(interval time.Duration) *Pacer { return &Pacer{interval: interval, now: time.Now} }

// Wait returns when the next message may go: at once if the last one went
// at least an interval ago, else at the end of the interval (or when ctx
// is done, returning its error). Call it after being told there is
// something to send and before collecting it; then Sent.
func (p *Pacer) Wait(ctx context.Context) error {
	if p.interval <= 0 || p.last.IsZero() {
		return nil
	}
	d := p.interval - p.now().Sub(p.last)
	if d <= 0 {
		return nil
	}
	if p.after != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.after(d):
			return nil
		}
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-ctx.Done():
		p.timer.Stop()
		return ctx.Err()
	case <-p.timer.C:
		return nil
	}
}

// Sent records that a message went now.
func (p *Pacer) Sent() { p.last = p.now() }

// Stop releases the pacer's timer.
func (p *Pacer) Stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}
