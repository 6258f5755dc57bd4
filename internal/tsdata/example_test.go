package tsdata_test

import (
	"bufio"
	"fmt"
	"os"

	"github.com/shoal-data/shoal/internal/tsdata"
)

func Example() {
	dir, err := os.MkdirTemp("", "tsdata")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	paths, err := tsdata.Write(dir, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(paths), "files,", tsdata.Rows(), "rows")
	f, err := os.Open(paths[0])
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 3 && sc.Scan(); i++ {
		fmt.Println(sc.Text())
	}
	// Output:
	// 9 files, 525600 rows
	// timestamp,id,name,x,y,temperature
	// 2000-01-01 00:00:00,1038,Ingrid,0.872083,-0.303692,-0.551
	// 2000-01-01 00:01:00,935,Frank,-0.886373,0.699899,-2.651
}
