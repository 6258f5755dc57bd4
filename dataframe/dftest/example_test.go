package dftest_test

import (
	"fmt"

	"github.com/shoal-data/shoal/dataframe/dftest"
)

// In a test, dftest.AssertEqual(t, got, want) reports the same text through
// t.Errorf; Diff returns it.
func ExampleDiff() {
	got, _ := dftest.NewRecord(
		dftest.Strings("city", "Lima", "Oslo", "Pune"),
		dftest.Int64s("n", 3, 1, 2),
		dftest.Float64s("mean_temp", 19.4, nil, 27.1),
	)
	defer got.Release()
	want, _ := dftest.NewRecord(
		dftest.Strings("city", "Lima", "Oslo", "Pune"),
		dftest.Float64s("n", 3, 1, 2),
		dftest.Float64s("mean_temp", 19.5, nil, 27.1),
	)
	defer want.Release()

	fmt.Println(dftest.Diff(got, want))
	fmt.Println("---")
	fmt.Println(dftest.Diff(got, want, dftest.CheckTypes(false), dftest.Tolerance(0.01, 0)) == "")
	// Output:
	// column "n": got int64, want float64
	// 1 of 3 rows differs:
	//   row  column     got   want
	//   0    mean_temp  19.4  19.5
	// ---
	// true
}

func ExampleIgnoreRowOrder() {
	got, _ := dftest.NewRecord(dftest.Int64s("id", 3, 1, 2), dftest.Strings("name", "cy", "al", "bo"))
	defer got.Release()
	want, _ := dftest.NewRecord(dftest.Int64s("id", 1, 2, 4), dftest.Strings("name", "al", "bo", "di"))
	defer want.Release()

	fmt.Println(dftest.Diff(got, want, dftest.IgnoreRowOrder()))
	// Output:
	// 1 row only in got (ignoring row order):
	//   row  id  name
	//   0    3   "cy"
	// 1 row only in want (ignoring row order):
	//   row  id  name
	//   2    4   "di"
}
