package parquet

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// hiveNull is the directory value standing for a null partition value, as
// Hive, Spark, pyarrow and DuckDB write it.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// staticPrefix returns the directory part of a pattern before its first
// wildcard: the root below which key=value directories are partitions.
func staticPrefix(pattern string) string {
	p := filepath.ToSlash(pattern)
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		// A plain file name: its own directory is not a partition.
		return p[:strings.LastIndexByte(p, '/')+1]
	}
	return p[:strings.LastIndexByte(p[:i], '/')+1]
}

// hiveSegments returns the key=value directories of path below root, in
// order, with values unescaped.
func hiveSegments(root, path string) (keys, values []string, err error) {
	p := filepath.ToSlash(path)
	p = strings.TrimPrefix(p, root)
	dirs := strings.Split(p, "/")
	dirs = dirs[:len(dirs)-1] // the file name
	for _, d := range dirs {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" {
			continue
		}
		key, err := url.PathUnescape(k)
		if err != nil {
			return nil, nil, fmt.Errorf("partition directory %q: %w", d, err)
		}
		val, err := url.PathUnescape(v)
		if err != nil {
			return nil, nil, fmt.Errorf("partition directory %q: %w", d, err)
		}
		keys = append(keys, key)
		values = append(values, val)
	}
	return keys, values, nil
}

// escapePartition escapes a partition value or key for a directory name:
// bytes that are not letters, digits or one of "-_.~" (and not part of a
// UTF-8 sequence) become %XX, as Hive and DuckDB do.
func escapePartition(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c >= 0x80:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	out := b.String()
	if out == "." || out == ".." {
		return strings.ReplaceAll(out, ".", "%2E")
	}
	return out
}
