package ended

import (
	"testing"
	"time"
)

func TestSince(t *testing.T) {
	before := time.Now()
	Mark("/tmp/x/shuffle-a/")
	after := time.Now().Add(time.Nanosecond)
	tests := []struct {
		dir  string
		t    time.Time
		want bool
	}{
		{"/tmp/x/shuffle-a", before, true},
		{"/tmp/x/./shuffle-a", before, true},
		{"/tmp/x/shuffle-a", after, false},
		{"/tmp/x/shuffle-b", before, false},
	}
	for _, tt := range tests {
		if got := Since(tt.dir, tt.t); got != tt.want {
			t.Errorf("Since(%q, %v) = %v, want %v", tt.dir, tt.t, got, tt.want)
		}
	}
}
