package wire

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/diagnostics"
)

func TestAlertRoundTrip(t *testing.T) {
	start := time.Unix(1735830245, 123456789)
	for _, a := range []diagnostics.Alert{
		{Name: "disk-full", Severity: "warning", Worker: "127.0.0.1:4000", Path: "/tmp/w", Value: 0.93, Threshold: 0.9,
			Message: "worker 127.0.0.1:4000: ...", Action: "free space", Start: start},
		{Name: "shuffle-skew", Severity: "warning", Worker: "w", Key: "shuffle-collect-3fa2c1d0-4", Shuffle: "3fa2c1d0",
			Value: 4e8, Threshold: 1e8, Message: "m", Action: "a", Start: start, End: start.Add(time.Minute)},
	} {
		b, err := proto.Marshal(EncodeAlert(&a))
		if err != nil {
			t.Fatal(err)
		}
		var w AlertInfo
		if err := proto.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		if got := DecodeAlert(&w); !reflect.DeepEqual(got, a) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, a)
		}
	}
}
