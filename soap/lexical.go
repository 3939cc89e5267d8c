package soap

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/wsrkit/wsrkit/rmp/group"
)

// ErrNoOffset is returned by ParseDateTime for a value without a time-zone
// offset; the header parser turns it into InvalidExpiryTime (D3).
var ErrNoOffset = errors.New("soap: xsd:dateTime has no time-zone offset")

// lexError is a lexical error; it names the XSD type that was expected.
type lexError struct{ msg string }

func (e *lexError) Error() string { return "soap: " + e.msg }

func lexErr(msg string) error { return &lexError{msg} }

// isXMLSpace reports whether c is XML white space (S production).
func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// trimXMLSpace removes leading and trailing XML white space, as the XSD
// whiteSpace="collapse" facet of every type read here requires.
func trimXMLSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isXMLSpace(s[i]) {
		i++
	}
	for j > i && isXMLSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// ParseUnsignedLong parses an xsd:unsignedLong: optional leading '+', decimal
// digits (leading zeros allowed), surrounding white space trimmed. A '-' sign,
// a decimal point, an empty value and values above 2^64-1 are refused.
func ParseUnsignedLong(s string) (uint64, error) {
	s = trimXMLSpace(s)
	if len(s) > 0 && s[0] == '+' {
		s = s[1:]
	}
	if s == "" {
		return 0, lexErr("xsd:unsignedLong is empty")
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, lexErr("xsd:unsignedLong has a character other than a digit")
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, lexErr("xsd:unsignedLong is above 18446744073709551615")
		}
		n = n*10 + d
	}
	return n, nil
}

// ParseBoolean parses an xsd:boolean: "true", "false", "1" or "0", with
// surrounding white space trimmed.
func ParseBoolean(s string) (bool, error) {
	switch trimXMLSpace(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, lexErr("xsd:boolean is not one of true, false, 1, 0")
}

// digits reads exactly n ASCII digits of s at i.
func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for k := i; k < i+n; k++ {
		c := s[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// fraction reads one or more digits at i as a fraction of a second, truncated
// to nanoseconds. It returns the nanoseconds and the index after the digits.
func fraction(s string, i int) (int64, int, bool) {
	start := i
	var ns int64
	scale := int64(100_000_000)
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		ns += int64(s[i]-'0') * scale
		scale /= 10
		i++
	}
	return ns, i, i > start
}

// ParseDateTime parses an xsd:dateTime (YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm])
// and returns it in UTC. Years are limited to 0001–9999 (also after the shift
// to UTC), and 0001-01-01T00:00:00Z, Go's zero Time, is refused. A value without an offset returns ErrNoOffset (D3); fractional
// seconds beyond nanoseconds are truncated; 24:00:00 is the next day's start.
func ParseDateTime(s string) (time.Time, error) {
	s = trimXMLSpace(s)
	bad := func(what string) (time.Time, error) {
		return time.Time{}, lexErr("xsd:dateTime " + what)
	}
	if len(s) < 19 {
		return bad("is too short")
	}
	year, ok1 := digits(s, 0, 4)
	month, ok2 := digits(s, 5, 2)
	day, ok3 := digits(s, 8, 2)
	hour, ok4 := digits(s, 11, 2)
	minute, ok5 := digits(s, 14, 2)
	sec, ok6 := digits(s, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || s[4] != '-' || s[7] != '-' ||
		s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return bad("is not YYYY-MM-DDThh:mm:ss")
	}
	i := 19
	var nsec int64
	if i < len(s) && s[i] == '.' {
		var ok bool
		if nsec, i, ok = fraction(s, i+1); !ok {
			return bad("has a '.' without digits")
		}
	}
	if year < 1 {
		return bad("year must be 0001..9999")
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return bad("has no such date")
	}
	if minute > 59 || sec > 59 {
		return bad("has minutes or seconds out of range")
	}
	if hour > 24 || (hour == 24 && (minute != 0 || sec != 0 || nsec != 0)) {
		return bad("has hours out of range")
	}
	var offset time.Duration
	switch {
	case i == len(s):
		return time.Time{}, ErrNoOffset
	case s[i] == 'Z' && i+1 == len(s):
	case (s[i] == '+' || s[i] == '-') && i+6 == len(s) && s[i+3] == ':':
		oh, ok1 := digits(s, i+1, 2)
		om, ok2 := digits(s, i+4, 2)
		if !ok1 || !ok2 || om > 59 || oh > 14 || (oh == 14 && om != 0) {
			return bad("has an offset out of range")
		}
		offset = time.Duration(oh)*time.Hour + time.Duration(om)*time.Minute
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return bad("has trailing characters after the seconds")
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, int(nsec), time.UTC).Add(-offset)
	if y := t.Year(); y < 1 || y > 9999 {
		return bad("is outside years 0001..9999 in UTC")
	}
	if t.IsZero() {
		// Go's zero Time means "absent" (Timing.Expiry); the instant itself
		// is refused rather than silently dropped.
		return bad("0001-01-01T00:00:00Z is not accepted")
	}
	return t, nil
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// AppendDateTime appends t in UTC as an xsd:dateTime ending in Z, with
// fractional seconds only when non-zero (D3). It fails for the zero Time and
// for years outside 0001..9999.
func AppendDateTime(dst []byte, t time.Time) ([]byte, error) {
	if t.IsZero() {
		return dst, errors.New("soap: cannot write the zero time as xsd:dateTime")
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return dst, errors.New("soap: xsd:dateTime year outside 0001..9999")
	}
	return t.AppendFormat(dst, time.RFC3339Nano), nil
}

// ParseDuration parses an xsd:duration -?PnYnMnDTnHnMnS into a
// group.Duration. Only the seconds may have a fraction (truncated to
// nanoseconds); at least one part must be present, and a 'T' must be
// followed by one. The hours, minutes and seconds must fit a time.Duration.
func ParseDuration(s string) (group.Duration, error) {
	s = trimXMLSpace(s)
	var d group.Duration
	bad := func(what string) (group.Duration, error) {
		return group.Duration{}, lexErr("xsd:duration " + what)
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		d.Negative = true
		i++
	}
	if i >= len(s) || s[i] != 'P' {
		return bad("does not start with P")
	}
	i++
	parts := 0
	inTime := false
	order := 0 // index into "YMDHMS" of the last designator read, so parts stay in order
	for i < len(s) {
		if s[i] == 'T' {
			if inTime {
				return bad("has two T")
			}
			inTime = true
			order = 3
			i++
			if i == len(s) {
				return bad("has T without a time part")
			}
			continue
		}
		start := i
		var n uint64
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if n > (math.MaxInt64-uint64(s[i]-'0'))/10 {
				return bad("has a number too large")
			}
			n = n*10 + uint64(s[i]-'0')
			i++
		}
		if i == start {
			return bad("has a designator without a number")
		}
		var frac int64
		hasFrac := false
		if i < len(s) && s[i] == '.' {
			var ok bool
			if frac, i, ok = fraction(s, i+1); !ok {
				return bad("has a '.' without digits")
			}
			hasFrac = true
		}
		if i == len(s) {
			return bad("has a number without a designator")
		}
		des := s[i]
		i++
		var pos int
		switch {
		case !inTime && des == 'Y':
			pos = 1
		case !inTime && des == 'M':
			pos = 2
		case !inTime && des == 'D':
			pos = 3
		case inTime && des == 'H':
			pos = 4
		case inTime && des == 'M':
			pos = 5
		case inTime && des == 'S':
			pos = 6
		default:
			return bad("has an unknown or misplaced designator")
		}
		if pos <= order {
			return bad("has parts out of order or repeated")
		}
		order = pos
		if hasFrac && pos != 6 {
			return bad("has a fraction outside the seconds")
		}
		var unit time.Duration
		switch pos {
		case 1:
			d.Years = int64(n)
		case 2:
			d.Months = int64(n)
		case 3:
			d.Days = int64(n)
		case 4:
			unit = time.Hour
		case 5:
			unit = time.Minute
		case 6:
			unit = time.Second
		}
		if unit != 0 {
			if n > uint64(math.MaxInt64/int64(unit)) {
				return bad("has a time part too large")
			}
			add := time.Duration(n)*unit + time.Duration(frac)
			if d.Clock > math.MaxInt64-add {
				return bad("has a time part too large")
			}
			d.Clock += add
		}
		parts++
	}
	if parts == 0 {
		return bad("has no part")
	}
	return d, nil
}

// AppendDuration appends d as an xsd:duration (e.g. P1DT2H30M0.5S, PT0S for
// zero). It fails when a part is negative (use Negative instead).
func AppendDuration(dst []byte, d group.Duration) ([]byte, error) {
	if d.Years < 0 || d.Months < 0 || d.Days < 0 || d.Clock < 0 {
		return dst, errors.New("soap: xsd:duration part is negative; set Negative instead")
	}
	if d.Negative {
		dst = append(dst, '-')
	}
	dst = append(dst, 'P')
	if d.Years != 0 {
		dst = append(strconv.AppendUint(dst, uint64(d.Years), 10), 'Y')
	}
	if d.Months != 0 {
		dst = append(strconv.AppendUint(dst, uint64(d.Months), 10), 'M')
	}
	if d.Days != 0 {
		dst = append(strconv.AppendUint(dst, uint64(d.Days), 10), 'D')
	}
	if d.Clock == 0 && (d.Years != 0 || d.Months != 0 || d.Days != 0) {
		return dst, nil
	}
	dst = append(dst, 'T')
	c := d.Clock
	h := c / time.Hour
	c -= h * time.Hour
	m := c / time.Minute
	c -= m * time.Minute
	if h != 0 {
		dst = append(strconv.AppendUint(dst, uint64(h), 10), 'H')
	}
	if m != 0 {
		dst = append(strconv.AppendUint(dst, uint64(m), 10), 'M')
	}
	if c != 0 || (h == 0 && m == 0) {
		sec := c / time.Second
		ns := int64(c - sec*time.Second)
		dst = strconv.AppendUint(dst, uint64(sec), 10)
		if ns != 0 {
			var b [10]byte
			b[0] = '.'
			for k := 9; k >= 1; k-- {
				b[k] = byte('0' + ns%10)
				ns /= 10
			}
			n := 10
			for b[n-1] == '0' {
				n--
			}
			dst = append(dst, b[:n]...)
		}
		dst = append(dst, 'S')
	}
	return dst, nil
}
