package security

import "testing"

func TestIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8786", true}, {"localhost:1", true}, {"[::1]:80", true}, {"127.0.0.2:5", true},
		{"10.0.0.1:8786", false}, {":8786", false}, {"0.0.0.0:1", false}, {"example.org:1", false},
	} {
		if got := IsLoopback(tc.addr); got != tc.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
