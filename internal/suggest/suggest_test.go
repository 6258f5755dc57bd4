package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"amount", "shop", "paid", "temperature", "id1"}
	for _, tc := range []struct{ s, want string }{
		{"ammount", "amount"},
		{"SHOP", "shop"},
		{"temprature", "temperature"},
		{"tempreture_c", "temperature"},
		{"id2", "id1"},
		{"country", ""},
		{"x", ""},
		{"", ""},
	} {
		if got := Closest(tc.s, names); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
	if got := Closest("a", nil); got != "" {
		t.Errorf("no names: %q", got)
	}
}
