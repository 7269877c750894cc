package progress

import (
	"maps"
	"math"
	"strconv"
	"testing"
)

func FuzzMetricFold(f *testing.F) {
	f.Add("loss lr loss acc", 3)
	f.Add("a b c d e f g h learning_rate tokens_per_sec", 1)
	f.Add("x", 200)
	f.Fuzz(func(t *testing.T, keys string, rounds int) {
		if rounds < 0 || rounds > 300 {
			return
		}
		var m metricFold
		want := map[string]float64{}
		v := 0.0
		for r := 0; r < rounds; r++ {
			for i := 0; i < len(keys); {
				j := i
				for j < len(keys) && keys[j] != ' ' {
					j++
				}
				k := keys[i:j]
				if r%3 == 1 {
					k += strconv.Itoa(r) // many distinct keys: the table fills
				}
				if k != "" {
					v++
					m.set(k, v)
					want[k] = v
				}
				i = j + 1
			}
		}
		got := m.build()
		if len(want) == 0 {
			want = nil
		}
		if !maps.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("fold of %q x%d = %v, want %v", keys, rounds, got, want)
		}
	})
}

func FuzzKeyEq(f *testing.F) {
	f.Add("", "")
	f.Add("abc", "abd")
	f.Add("learning_rate", "learning_rats")
	f.Add("abcdefghijklmnopq", "abcdefghijklmnopr")
	f.Fuzz(func(t *testing.T, a, b string) {
		if got := keyEq(a, b); got != (a == b) {
			t.Fatalf("keyEq(%q, %q) = %v", a, b, got)
		}
		if len(a) > 0 && len(b) > 0 && a == b && keyHash(a) != keyHash(b) {
			t.Fatalf("keyHash differs for %q", a)
		}
		if len(a) > 0 && keyHash(a) == 0 {
			t.Fatalf("keyHash(%q) = 0", a)
		}
	})
}

func TestUpTo(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 99.5, 100, 100.0000001, -1, math.NaN(), math.Inf(1), math.Inf(-1),
		math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64} {
		for _, max := range []float64{100, math.MaxFloat64} {
			want := v
			if !(v >= 0 && v <= max) || v == 0 {
				want = 0
			}
			if got := upTo(v, max); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("upTo(%v, %v) = %v, want %v", v, max, got, want)
			}
		}
	}
}
