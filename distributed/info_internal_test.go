package distributed

import "testing"

func TestDashboardAddressReachable(t *testing.T) {
	tests := []struct{ addr, scheduler, want string }{
		{"127.0.0.1:8787", "10.0.0.5:8786", "127.0.0.1:8787"},
		{":8787", "10.0.0.5:8786", "10.0.0.5:8787"},
		{"0.0.0.0:8787", "sched.example.com:8786", "sched.example.com:8787"},
		{"[::]:8787", "[fd00::1]:8786", "[fd00::1]:8787"},
		{"[::]:8787", "0.0.0.0:8786", "[::]:8787"},
		{"https://proxy.example.com/dask", "10.0.0.5:8786", "https://proxy.example.com/dask"},
		{"", "10.0.0.5:8786", ""},
	}
	for _, tc := range tests {
		if got := reachable(tc.addr, tc.scheduler); got != tc.want {
			t.Errorf("reachable(%q, %q) = %q, want %q", tc.addr, tc.scheduler, got, tc.want)
		}
	}
	for addr, want := range map[string]string{"": "", "127.0.0.1:8787": "http://127.0.0.1:8787/status",
		"https://proxy.example.com/dask": "https://proxy.example.com/dask"} {
		if got := (&Info{DashboardAddress: addr}).DashboardURL(); got != want {
			t.Errorf("DashboardURL of %q: %q, want %q", addr, got, want)
		}
	}
}
