package parquetio

import (
	"math/big"
	"strconv"
	"testing"
)

// be16 is v as 16 big-endian two's complement bytes (a decimal128).
func be16(v int64) []byte {
	x := big.NewInt(v)
	if v < 0 {
		x.Add(x, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	b := make([]byte, 16)
	x.FillBytes(b)
	return b
}

// TestDecimalConversion checks each decimal against strconv.ParseFloat of
// its decimal text (the correctly rounded float64), for small and wide
// encodings and the fast and slow paths, and the whole-number and
// formatting helpers on hand-worked cases.
func TestDecimalConversion(t *testing.T) {
	cases := []struct {
		u     int64
		scale int32
		text  string
	}{
		{110, 2, "1.10"}, {-12345, 2, "-123.45"}, {5, 2, "0.05"}, {-5, 3, "-0.005"},
		{0, 2, "0.00"}, {1<<53 + 1, 2, "90071992547409.93"}, {123456789, 30, "0.000000000000000000000123456789"},
		{7, 0, "7"},
	}
	for _, c := range cases {
		want, err := strconv.ParseFloat(c.text, 64)
		if err != nil {
			t.Fatal(err)
		}
		encs := []decimal{{small: c.u}, decimalBytes(be16(c.u))}
		if c.u < 1<<23 && c.u >= -(1<<23) {
			encs = append(encs, decimalBytes(be16(c.u)[13:])) // three bytes, sign-extended
		}
		for _, u := range encs {
			if got := u.float(c.scale); got != want {
				t.Errorf("%d e-%d (wide %v): %v, want %v", c.u, c.scale, u.wide, got, want)
			}
			if got := u.format(c.scale); got != c.text {
				t.Errorf("%d e-%d: formatted %q, want %q", c.u, c.scale, got, c.text)
			}
		}
	}
	for _, c := range []struct {
		u     int64
		scale int32
		want  int64
		ok    bool
	}{{300, 2, 3, true}, {-700, 2, -7, true}, {150, 2, 0, false}, {42, 0, 42, true}} {
		for _, u := range []decimal{{small: c.u}, decimalBytes(be16(c.u))} {
			if v, ok := u.integer(c.scale); v != c.want || ok != c.ok {
				t.Errorf("integer(%d e-%d) = %d, %v; want %d, %v", c.u, c.scale, v, ok, c.want, c.ok)
			}
		}
	}
}
