package checks

import (
	"fmt"
	"math/big"
	"math/rand"
	"testing"
)

func TestCompareNumbers(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"9007199254740993", "9007199254740992", 1},
		{"9007199254740992", "9007199254740993", -1},
		{"1e400", "2e400", -1},
		{"2E+400", "1e400", 1},
		{"-1e400", "-2e400", 1},
		{"0", "-0", 0},
		{"0.0", "0e5", 0},
		{"1", "1.0", 0},
		{"10", "1e1", 0},
		{"0.001", "1e-3", 0},
		{"0.5", "0.25", 1},
		{"-0.5", "0.25", -1},
		{"0", "1e-999999999999", -1},
		{"1.05", "1.5", -1},
		{"100.001", "100.0001", 1},
		{"12.30", "1.23e1", 0},
		{"-3", "-3.000000000000000000001", 1},
		{"1e99999999999999999999999", "1e99999999999999999999998", 0}, // both beyond the exponent bound
	} {
		if got := compareNumbers(c.a, c.b); got != c.want {
			t.Errorf("compareNumbers(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	// Against math/big on random spellings.
	r := rand.New(rand.NewSource(1))
	spell := func() string {
		s := ""
		if r.Intn(3) == 0 {
			s = "-"
		}
		s += fmt.Sprint(r.Intn(3) * r.Intn(1000))
		if r.Intn(2) == 0 {
			s += "." + fmt.Sprintf("%0*d", 1+r.Intn(3), r.Intn(1000))
		}
		if r.Intn(3) == 0 {
			s += fmt.Sprintf("e%d", r.Intn(9)-4)
		}
		return s
	}
	for range 20000 {
		a, b := spell(), spell()
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if got, want := compareNumbers(a, b), ra.Cmp(rb); got != want {
			t.Fatalf("compareNumbers(%s, %s) = %d, want %d", a, b, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { compareNumbers("12345.678e3", "12345678") }); n != 0 {
		t.Errorf("compareNumbers allocates %v times", n)
	}
}
