package parquetio

import (
	"context"
	"encoding/binary"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// decimal is one unscaled DECIMAL value: small when it fits in an int64
// (wide false), else the big-endian two's complement bytes in b.
type decimal struct {
	small int64
	b     []byte
	wide  bool
}

// pow10 holds the powers of ten that are exact float64s.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalBytes reads a big-endian two's complement integer (the DECIMAL
// encoding of FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY columns).
func decimalBytes(b []byte) decimal {
	if len(b) == 0 {
		return decimal{}
	}
	if len(b) <= 8 {
		var buf [8]byte
		fill := byte(0)
		if b[0]&0x80 != 0 {
			fill = 0xff
		}
		for i := range 8 - len(b) {
			buf[i] = fill
		}
		copy(buf[8-len(b):], b)
		return decimal{small: int64(binary.BigEndian.Uint64(buf[:]))}
	}
	return decimal{b: b, wide: true}
}

// bigInt returns the unscaled value as a big.Int.
func (u decimal) bigInt() *big.Int {
	if !u.wide {
		return big.NewInt(u.small)
	}
	v := new(big.Int).SetBytes(u.b)
	if u.b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(u.b))))
	}
	return v
}

// float returns unscaled / 10^scale rounded to the nearest float64: a
// division of two exact float64s when both are exact (IEEE division rounds
// correctly), else by parsing the decimal, which strconv rounds correctly.
func (u decimal) float(scale int32) float64 {
	const exact = 1 << 53
	if !u.wide && u.small > -exact && u.small < exact && int(scale) < len(pow10) {
		return float64(u.small) / pow10[scale]
	}
	f, _ := strconv.ParseFloat(u.bigInt().String()+"e-"+strconv.Itoa(int(scale)), 64)
	return f
}

// integer returns unscaled / 10^scale when it is a whole number that fits
// in an int64.
func (u decimal) integer(scale int32) (int64, bool) {
	v := u.bigInt()
	if scale > 0 {
		var r big.Int
		v.QuoRem(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil), &r)
		if r.Sign() != 0 {
			return 0, false
		}
	}
	if !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

// format writes the value as a decimal number, for messages.
func (u decimal) format(scale int32) string {
	s := u.bigInt().String()
	if scale <= 0 {
		return s
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for len(s) <= int(scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// decimals reads the n rows of a DECIMAL column, calling emit with each
// value, the index of its batch's first row in the row group and its index
// in the batch. A missing row (decoder.missing) is emitted as 0.
func (d *decoder) decimals(ctx context.Context, cr file.ColumnChunkReader, c *colSpec, n int64, loc rgLoc, emit func(off int64, i int, u decimal) error) error {
	defs := scratch(&d.defs)
	switch c.conv {
	case convDec32:
		r, ok := cr.(*file.Int32ColumnChunkReader)
		if !ok {
			return physicalMismatch(c, loc, cr)
		}
		return readFlat(ctx, r, c, n, loc, scratch(&d.i32), defs, d.missing, func(off int64, vals []int32) error {
			for i, v := range vals {
				if err := emit(off, i, decimal{small: int64(v)}); err != nil {
					return err
				}
			}
			return nil
		})
	case convDec64:
		r, ok := cr.(*file.Int64ColumnChunkReader)
		if !ok {
			return physicalMismatch(c, loc, cr)
		}
		return readFlat(ctx, r, c, n, loc, scratch(&d.i64), defs, d.missing, func(off int64, vals []int64) error {
			for i, v := range vals {
				if err := emit(off, i, decimal{small: v}); err != nil {
					return err
				}
			}
			return nil
		})
	case convDecFixed:
		r, ok := cr.(*file.FixedLenByteArrayColumnChunkReader)
		if !ok {
			return physicalMismatch(c, loc, cr)
		}
		return readFlat(ctx, r, c, n, loc, scratch(&d.fl), defs, d.missing, func(off int64, vals []parquet.FixedLenByteArray) error {
			for i, v := range vals {
				if err := emit(off, i, decimalBytes(v)); err != nil {
					return err
				}
			}
			return nil
		})
	case convDecBytes:
		r, ok := cr.(*file.ByteArrayColumnChunkReader)
		if !ok {
			return physicalMismatch(c, loc, cr)
		}
		return readFlat(ctx, r, c, n, loc, scratch(&d.ba), defs, d.missing, func(off int64, vals []parquet.ByteArray) error {
			for i, v := range vals {
				if err := emit(off, i, decimalBytes(v)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return loc.parquetErr(c.name, "internal error: column of type %s read as decimals", c.typ)
}
