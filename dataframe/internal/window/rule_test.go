package window

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

func ts(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func TestRuleBins(t *testing.T) {
	oslo := mustLoad(t, "Europe/Oslo")
	tests := []struct {
		rule   string
		loc    *time.Location
		origin string
		at     string
		start  string
		end    string
		label  string
	}{
		{"1h", nil, "", "2026-03-29T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", "2026-03-29T01:00:00Z"},
		{"15min", nil, "", "2026-03-29T10:07:59Z", "2026-03-29T10:00:00Z", "2026-03-29T10:15:00Z", "2026-03-29T10:00:00Z"},
		{"30s", nil, "", "1969-12-31T23:59:31Z", "1969-12-31T23:59:30Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:30Z"},
		// Oslo moves its clocks from 02:00+01 to 03:00+02 on 2026-03-29:
		// hourly bins stay an hour long.
		{"1h", oslo, "", "2026-03-29T01:30:00+01:00", "2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T01:00:00+01:00"},
		{"1h", oslo, "", "2026-03-29T03:30:00+02:00", "2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00", "2026-03-29T03:00:00+02:00"},
		// and back from 03:00+02 to 02:00+01 on 2026-10-25: 02:30 twice.
		{"1h", oslo, "", "2026-10-25T02:30:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T02:00:00+02:00"},
		{"1h", oslo, "", "2026-10-25T02:30:00+01:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00", "2026-10-25T02:00:00+01:00"},
		// A day is a calendar day: 23 hours in March, 25 in October.
		{"1D", oslo, "", "2026-03-29T12:00:00+02:00", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00", "2026-03-29T00:00:00+01:00"},
		{"1D", oslo, "", "2026-10-25T23:59:00+01:00", "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00", "2026-10-25T00:00:00+02:00"},
		{"D", nil, "", "2026-10-25T23:59:00+01:00", "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z", "2026-10-25T00:00:00Z"},
		// Months are labelled by their last day.
		{"ME", nil, "", "2000-02-15T08:00:00Z", "2000-02-01T00:00:00Z", "2000-03-01T00:00:00Z", "2000-02-29T00:00:00Z"},
		{"M", oslo, "", "2026-03-31T23:30:00+02:00", "2026-03-01T00:00:00+01:00", "2026-04-01T00:00:00+02:00", "2026-03-31T00:00:00+02:00"},
		// New Year in Oslo is an hour before New Year in UTC.
		{"YE", oslo, "", "2026-12-31T23:30:00Z", "2027-01-01T00:00:00+01:00", "2028-01-01T00:00:00+01:00", "2027-12-31T00:00:00+01:00"},
		{"YE", nil, "", "2026-12-31T23:30:00Z", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "2026-12-31T00:00:00Z"},
		{"A", nil, "", "2027-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", "2027-12-31T00:00:00Z"},
		{"YE-JUN", nil, "", "2026-07-01T00:00:00Z", "2026-07-01T00:00:00Z", "2027-07-01T00:00:00Z", "2027-06-30T00:00:00Z"},
		{"QE", nil, "", "2026-11-15T00:00:00Z", "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z", "2026-12-31T00:00:00Z"},
		{"Q", nil, "", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z", "2026-03-31T00:00:00Z"},
		{"QE-NOV", nil, "", "2026-11-15T00:00:00Z", "2026-09-01T00:00:00Z", "2026-12-01T00:00:00Z", "2026-11-30T00:00:00Z"},
		// 2026-01-01 is a Thursday: W (= W-SUN) weeks run Monday to Sunday.
		{"W", nil, "", "2026-01-01T10:00:00Z", "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-04T00:00:00Z"},
		{"W", nil, "", "2026-01-04T23:59:59Z", "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-04T00:00:00Z"},
		{"W-MON", nil, "", "2026-01-01T10:00:00Z", "2025-12-30T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-05T00:00:00Z"},
		{"W-SAT", oslo, "", "2026-03-29T10:00:00+02:00", "2026-03-29T00:00:00+01:00", "2026-04-05T00:00:00+02:00", "2026-04-04T00:00:00+02:00"},
		// Rules that do not divide a day depend on the origin (pandas counts
		// from the first day of the data): two hours counted from a midnight
		// before the change of clocks, or after it.
		{"2h", oslo, "2026-03-28T12:00:00Z", "2026-03-29T04:30:00+02:00", "2026-03-29T03:00:00+02:00", "2026-03-29T05:00:00+02:00", "2026-03-29T03:00:00+02:00"},
		{"2h", oslo, "2026-03-30T12:00:00Z", "2026-03-29T04:30:00+02:00", "2026-03-29T04:00:00+02:00", "2026-03-29T06:00:00+02:00", "2026-03-29T04:00:00+02:00"},
		{"7h", nil, "2026-03-01T05:00:00Z", "2026-03-02T01:00:00Z", "2026-03-01T21:00:00Z", "2026-03-02T04:00:00Z", "2026-03-01T21:00:00Z"},
		{"3D", nil, "2000-01-01T00:00:00Z", "2000-01-05T12:00:00Z", "2000-01-04T00:00:00Z", "2000-01-07T00:00:00Z", "2000-01-04T00:00:00Z"},
		// pandas: data from 2000-01-15, '2ME' bins end in January, March...
		{"2ME", nil, "2000-01-15T00:00:00Z", "2000-02-10T00:00:00Z", "2000-02-01T00:00:00Z", "2000-04-01T00:00:00Z", "2000-03-31T00:00:00Z"},
		{"2ME", nil, "2000-01-15T00:00:00Z", "1999-12-10T00:00:00Z", "1999-12-01T00:00:00Z", "2000-02-01T00:00:00Z", "2000-01-31T00:00:00Z"},
		// and '2W' bins end on the first Sunday of the data, 2000-01-09.
		{"2W", nil, "2000-01-05T00:00:00Z", "2000-01-12T00:00:00Z", "2000-01-10T00:00:00Z", "2000-01-24T00:00:00Z", "2000-01-23T00:00:00Z"},
		// Far from the origin (more than 292 years): seconds and beyond.
		{"1h", nil, "", "2400-06-01T10:30:00Z", "2400-06-01T10:00:00Z", "2400-06-01T11:00:00Z", "2400-06-01T10:00:00Z"},
		{"ME", nil, "", "1600-02-10T00:00:00Z", "1600-02-01T00:00:00Z", "1600-03-01T00:00:00Z", "1600-02-29T00:00:00Z"},
	}
	for _, tt := range tests {
		name := tt.rule + " " + tt.at
		if tt.loc != nil {
			name += " " + tt.loc.String()
		}
		t.Run(name, func(t *testing.T) {
			r, err := ParseRule(tt.rule)
			if err != nil {
				t.Fatal(err)
			}
			if tt.loc != nil {
				r = r.In(tt.loc)
			}
			if tt.origin != "" {
				r = r.WithOrigin(ts(t, tt.origin))
			}
			s, e := r.Bin(ts(t, tt.at))
			if !s.Equal(ts(t, tt.start)) || !e.Equal(ts(t, tt.end)) {
				t.Errorf("Bin = [%s, %s), want [%s, %s)", s, e, tt.start, tt.end)
			}
			if l := r.Label(s, e); !l.Equal(ts(t, tt.label)) {
				t.Errorf("Label = %s, want %s", l, tt.label)
			}
			// The next bin starts where this one ends.
			s2, _ := r.Bin(e)
			if !s2.Equal(e) {
				t.Errorf("next bin starts at %s, want %s", s2, e)
			}
		})
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, s := range []string{"", "0h", "h-MON", "5x", "W-FOO", "QE-XYZ", "1.5h", "-1D", "99999999999h"} {
		if _, err := ParseRule(s); !errors.Is(err, ErrBadRule) {
			t.Errorf("ParseRule(%q) = %v, want ErrBadRule", s, err)
		}
	}
}

func TestRuleJSON(t *testing.T) {
	r := MustParseRule("2h").In(mustLoad(t, "Europe/Oslo")).WithOrigin(ts(t, "2026-03-28T00:00:00Z"))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Rule
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	at := ts(t, "2026-03-29T04:30:00+02:00")
	s1, e1 := r.Bin(at)
	s2, e2 := back.Bin(at)
	if !s1.Equal(s2) || !e1.Equal(e2) || back.String() != "2h" || back.Location().String() != "Europe/Oslo" {
		t.Errorf("round trip %s: %s gives [%s, %s), want [%s, %s)", b, back, s2, e2, s1, e1)
	}
}
