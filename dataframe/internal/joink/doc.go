// Package joink holds the hash-join kernel of the dataframe: joins of two
// Arrow record batches in memory, on one or more key columns, with pandas'
// merge semantics for the output columns.
//
// A join runs as Build then Probe: Build makes a HashTable of one side (the
// smaller one, or the broadcast side), which any number of batches of the
// other side then Probe without rebuilding it; joins that keep the build
// side's unmatched rows (right and outer joins built on the right, left
// joins built on the left) ask for those with HashTable.Unmatched after the
// last probe. Join does all of it for two batches. A broadcast join builds
// the small side once per task and probes it with one partition; a
// shuffle join builds and probes the two parts of one shuffle output; a
// partition-aligned join does the same with partitions that share
// divisions.
//
// Keys: integers of any width and sign compare by value (an int32 key
// joins an int64 one), strings by their bytes whether plain, large or
// dictionary-encoded, timestamps as instants whatever their unit (both
// with a time zone or both without), dates, times, durations, booleans and
// floats (-0 equals 0). Several keys are a tuple. A null key never
// matches, nor does a NaN float key: SQL's rule, where pandas would match
// NaN with NaN. Such rows still appear, once and unmatched, in the joins
// that keep their side.
//
// Output columns (OutputSchema): the left columns, then the right ones;
// a key of the same name on both sides at the same position appears once;
// other names both sides have get Spec.Suffixes ("_x", "_y" by default).
// Output rows of Probe: probe rows in order, each with its matches in build
// order (see Join for the order of each kind of join).
//
// Keys are hashed with the open-addressing tables of package rows (a
// direct lookup table when integer keys lie in a small range); the rows of
// each build key are kept contiguous (a counting sort), so a probe finds a
// key's rows with one lookup and the output is sized in one pass and
// filled in a second. Output columns are typed gathers; probe columns are
// passed through without copying when every probe row appears once in
// order (a left join on a unique build key).
package joink
