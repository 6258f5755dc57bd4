// Package sketch holds a mergeable quantile sketch: approximate quantiles
// (medians, percentiles, the divisions of a range partitioning) of more
// numbers than fit in memory, computed per partition and merged, in
// little space.
//
// The sketch is KLL (Karnin, Lang and Liberty, "Optimal Quantile
// Approximation in Streams", 2016): a stack of compactors, level h holding
// items that stand for 2^h inputs each, capacities shrinking by 2/3 from
// the top level down (to at least 8); a full level is sorted and every
// other item, from a random first one, moves up a level. Its error is in
// rank, whatever the distribution of the values (skewed, heavy-tailed,
// with duplicates, in any order): for a sketch of parameter k over n
// values, the rank of the value Quantile(q) returns is within εn of qn,
// with ε ≈ 2.3/k^0.97 at 99% confidence for one query (ε = 1.33% at the
// default k = 200, 0.35% at k = 800). Merging sketches (of partitions of
// the data) keeps the bound for the union. Space is about 3k values plus 8
// per level, log2(n/k) levels: about 600 values (5 KiB encoded) at k = 200
// for n of a million. Below 2k values or so the sketch holds them all and answers
// exactly.
//
// The coin flips come from a seeded generator, so a sketch of the same
// values in the same order with the same seed is always the same; give the
// partial sketches of different partitions different seeds (the partition
// number) so that their errors are independent.
package sketch
