package joink_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/dataframe/internal/joink"
)

// A left join of orders with a small table of countries, as a broadcast
// join would run it: the small side is built once, and each partition of
// the large side probes it.
func Example() {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	countries, _ := dftest.NewRecord(dftest.Strings("code", "NO", "PE"), dftest.Strings("name", "Norway", "Peru"))
	defer countries.Release()
	spec := joink.Spec{How: joink.Left, LeftOn: []string{"country"}, RightOn: []string{"code"}}
	ht, err := joink.Build(ctx, countries, spec.RightOn, mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ht.Release()

	part, _ := dftest.NewRecord(dftest.Int64s("order", 1, 2, 3), dftest.Strings("country", "PE", "SE", "NO"))
	defer part.Release()
	out, err := joink.Probe(ctx, ht, part, spec, mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Release()
	fmt.Println(out.Schema().Field(2).Name, out.Schema().Field(3).Name)
	for i := range int(out.NumRows()) {
		fmt.Println(out.Column(0).ValueStr(i), out.Column(1).ValueStr(i), out.Column(2).ValueStr(i), out.Column(3).ValueStr(i))
	}
	// Output:
	// code name
	// 1 PE PE Peru
	// 2 SE (null) (null)
	// 3 NO NO Norway
}
