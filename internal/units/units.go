// Package units writes quantities for people: byte counts in binary
// units, for logs, errors and alerts.
package units

import "strconv"

// Bytes writes a byte count in binary units with two decimals, such as
// "1.50 GiB"; counts under a KiB are written whole, such as "512 B".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	u := 0
	for (f >= 1024 || f <= -1024) && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return strconv.FormatFloat(f, 'f', 2, 64) + " " + units[u]
}
