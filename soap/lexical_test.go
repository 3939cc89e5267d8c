package soap

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

func TestParseUnsignedLong(t *testing.T) {
	good := map[string]uint64{
		"0": 0, "+0": 0, "007": 7, "+42": 42, " \t12\n": 12,
		"18446744073709551615": math.MaxUint64, "+018446744073709551615": math.MaxUint64,
	}
	for in, want := range good {
		got, err := ParseUnsignedLong(in)
		noErr(t, err, in)
		equal(t, want, got, in)
	}
	for _, in := range []string{"", " ", "+", "-1", "-0", "1.0", "1e3", "18446744073709551616", "1 2", "٣", "0x10"} {
		if _, err := ParseUnsignedLong(in); err == nil {
			t.Errorf("ParseUnsignedLong(%q) accepted", in)
		}
	}
}

func TestParseBoolean(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "1": true, " false ": false, "0": false, "\ntrue\t": true} {
		got, err := ParseBoolean(in)
		noErr(t, err, in)
		equal(t, want, got, in)
	}
	for _, in := range []string{"", "TRUE", "True", "yes", "2", "t"} {
		if _, err := ParseBoolean(in); err == nil {
			t.Errorf("ParseBoolean(%q) accepted", in)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	good := map[string]time.Time{
		"2025-01-01T11:00:00Z":               time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC),
		" 2025-01-01T11:00:00.5Z ":           time.Date(2025, 1, 1, 11, 0, 0, 500_000_000, time.UTC),
		"2025-01-01T11:00:00.1234567891234Z": time.Date(2025, 1, 1, 11, 0, 0, 123_456_789, time.UTC),
		"2025-01-01T12:30:00+01:30":          time.Date(2025, 1, 1, 11, 0, 0, 0, time.UTC),
		"2024-12-31T20:00:00-05:00":          time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC),
		"2024-02-29T00:00:00-00:00":          time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		"2024-12-31T24:00:00Z":               time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		"2025-06-01T00:00:00+14:00":          time.Date(2025, 5, 31, 10, 0, 0, 0, time.UTC),
		"9999-12-31T23:59:59.999999999Z":     time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	}
	for in, want := range good {
		got, err := ParseDateTime(in)
		noErr(t, err, in)
		equal(t, want, got, in)
		equal(t, time.UTC, got.Location(), in)
	}
	// D3: no offset is refused with its own error.
	for _, in := range []string{"2025-01-01T11:00:00", "2025-01-01T11:00:00.25"} {
		if _, err := ParseDateTime(in); !errors.Is(err, ErrNoOffset) {
			t.Errorf("ParseDateTime(%q) = %v, want ErrNoOffset", in, err)
		}
	}
	for _, in := range []string{"", "2025-01-01", "2025-01-01 11:00:00Z", "2025-13-01T00:00:00Z",
		"2023-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "2025-01-01T25:00:00Z", "2025-01-01T24:00:01Z",
		"2025-01-01T11:60:00Z", "2025-01-01T11:00:60Z", "2025-01-01T11:00:00.Z", "2025-01-01T11:00:00+15:00",
		"2025-01-01T11:00:00+14:30", "2025-01-01T11:00:00+0100", "2025-01-01T11:00:00ZZ", "0000-01-01T00:00:00Z",
		"-2025-01-01T00:00:00Z", "12025-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-01:00",
		"2025-01-01T11:00:00z", "0001-01-01T00:00:00Z", "0001-01-01T01:00:00+01:00", "2025-1-01T11:00:00Z"} {
		_, err := ParseDateTime(in)
		if err == nil || errors.Is(err, ErrNoOffset) {
			t.Errorf("ParseDateTime(%q) = %v, want a lexical error", in, err)
		}
	}
}

func TestAppendDateTime(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 1, 1, 12, 0, 0, 0, paris), "2025-01-01T11:00:00Z"},
		{time.Date(2025, 1, 1, 11, 0, 0, 120_000_000, time.UTC), "2025-01-01T11:00:00.12Z"},
		{time.Date(2025, 1, 1, 11, 0, 0, 1, time.UTC), "2025-01-01T11:00:00.000000001Z"},
	} {
		got, err := AppendDateTime([]byte("x"), c.in)
		noErr(t, err)
		equal(t, "x"+c.want, string(got))
		back, err := ParseDateTime(c.want)
		noErr(t, err)
		equal(t, true, back.Equal(c.in))
	}
	for _, bad := range []time.Time{{}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)} {
		if out, err := AppendDateTime([]byte("x"), bad); err == nil || string(out) != "x" {
			t.Errorf("AppendDateTime(%v) = %q, %v", bad, out, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]group.Duration{
		"PT30M":                 {Clock: 30 * time.Minute},
		" P1Y2M3DT4H5M6.5S ":    {Years: 1, Months: 2, Days: 3, Clock: 4*time.Hour + 5*time.Minute + 6500*time.Millisecond},
		"-P1D":                  {Negative: true, Days: 1},
		"P0D":                   {},
		"PT0S":                  {},
		"PT90M":                 {Clock: 90 * time.Minute},
		"P13M":                  {Months: 13},
		"PT0.000000001S":        {Clock: 1},
		"PT1.0000000019S":       {Clock: time.Second + 1},
		"PT2562047H":            {Clock: 2562047 * time.Hour},
		"P9223372036854775807D": {Days: math.MaxInt64},
	}
	for in, want := range good {
		got, err := ParseDuration(in)
		noErr(t, err, in)
		equal(t, want, got, in)
	}
	for _, in := range []string{"", "P", "PT", "-", "1D", "P1DT", "PT1D", "P1H", "P1S", "P1M1Y", "PT1S1M",
		"P1D1D", "P1.5D", "PT1.5M", "P-1D", "P+1D", "PT1.S", "p1D", "P1DT1H1M1S1", "P 1D", "--P1D",
		"PT2562048H", "P9223372036854775808D", "PT9223372036S1S", "PT1TT1S"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %+v, want an error", in, d)
		}
	}
}

func TestAppendDuration(t *testing.T) {
	for _, c := range []struct {
		in   group.Duration
		want string
	}{
		{group.Duration{}, "PT0S"},
		{group.Duration{Clock: 30 * time.Minute}, "PT30M"},
		{group.Duration{Clock: 90 * time.Minute}, "PT1H30M"},
		{group.Duration{Years: 1, Months: 2, Days: 3}, "P1Y2M3D"},
		{group.Duration{Negative: true, Days: 1, Clock: 1500 * time.Millisecond}, "-P1DT1.5S"},
		{group.Duration{Clock: time.Hour + time.Nanosecond}, "PT1H0.000000001S"},
		{group.Duration{Months: 13}, "P13M"},
	} {
		got, err := AppendDuration(nil, c.in)
		noErr(t, err)
		equal(t, c.want, string(got))
		back, err := ParseDuration(c.want)
		noErr(t, err)
		equal(t, c.in, back, c.want)
	}
	for _, bad := range []group.Duration{{Years: -1}, {Clock: -time.Second}, {Days: -2}} {
		if _, err := AppendDuration(nil, bad); err == nil {
			t.Errorf("AppendDuration(%+v) accepted", bad)
		}
	}
}
