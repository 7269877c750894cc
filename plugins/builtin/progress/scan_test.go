package progress

import (
	"math"
	"strconv"
	"testing"
)

// parseUintRef is parseUint one digit per step.
func parseUintRef(s string, i int) (v int64, j int, ok bool) {
	j = i
	for j < len(s) && isDigit(s[j]) {
		if j-i >= 15 {
			return 0, j, false
		}
		v = v*10 + int64(s[j]-'0')
		j++
	}
	return v, j, j > i
}

var numberSeeds = []string{
	"", "0", "7", "12345678", "123456789", "123456789012345", "1234567890123456", "0.5", ".5", "5.", ".", "-", "+",
	"-0", "-0.0", "1e5", "1e", "1e+", "1.5e-3x", "nan", "-inf", "Infinity", "1.000e-05", "4.50it/s", "12:30",
	"99999999.99999999", "1234567.1234567", "12345678.1234567", "0.123456789012345", "3.14159265358979323",
	"00000000000000000001", "0E0000000000000000", "1e22", "1e23", "9e-22", "1e-23", "1,234", "--1", "+-1", "1.2.3", "0x10", "1_000", "١٢٣",
}

func FuzzNumbers(f *testing.F) {
	for _, s := range numberSeeds {
		f.Add(s, 0)
		f.Add("x"+s+" y", 1)
	}
	f.Fuzz(func(t *testing.T, s string, i int) {
		if i < 0 || i > len(s) {
			return
		}
		v, j, ok := parseUint(s, i)
		wv, wj, wok := parseUintRef(s, i)
		if v != wv || j != wj || ok != wok {
			t.Fatalf("parseUint(%q, %d) = %d %d %v, want %d %d %v", s, i, v, j, ok, wv, wj, wok)
		}
		f, j, ok := parseNum(s, i)
		wf, wj, wok := parseNumSlow(s, i)
		if math.Float64bits(f) != math.Float64bits(wf) && !(math.IsNaN(f) && math.IsNaN(wf)) || j != wj || ok != wok {
			t.Fatalf("parseNum(%q, %d) = %v %d %v, want %v %d %v", s, i, f, j, ok, wf, wj, wok)
		}
	})
}

func TestValue8(t *testing.T) {
	for n := 0; n <= 8; n++ {
		for _, d := range []string{"00000000", "12345678", "99999999", "90817263", "10000001"} {
			x := load8(d[:n] + "x/ .e-:\xff"[n:])
			want, _ := strconv.ParseUint("0"+d[:n], 10, 64)
			if got := value8(x, n); got != want {
				t.Errorf("value8(%q, %d) = %d, want %d", d[:n], n, got, want)
			}
		}
	}
}

func FuzzStructuralKey(f *testing.F) {
	for _, k := range []string{"", "e", "eta", "ETA", "Epoch", "epochs", "STEP", "steps", "Iter", "ITERATION", "it", "IT",
		"v_num", "V_NUM", "batch", "global_step", "Global_Step", "progress", "loss", "lr", "eta\x00", "İter", "ſtep",
		"\u212Aeta", "progress_bar", "iterations", "0123456789abcdefg", "step ", "G,oBAl_Step", "sTEq", "eta\x00\x00"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := structuralKey(k), structuralKeySlow(k); got != want {
			t.Fatalf("structuralKey(%q) = %v, want %v", k, got, want)
		}
	})
}

// scanKVRef is scanKV one byte per step.
func scanKVRef(s string, fn func(k string, v float64)) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		e := i
		for e > 0 && s[e-1] == ' ' && c == '=' {
			e--
		}
		b := e
		for b > 0 && (isWordByte(s[b-1]) || s[b-1] == '/' || s[b-1] == '.' || s[b-1] == '-' || s[b-1] == '@') {
			b--
		}
		if b == e || !isLetter(s[b]) && s[b] != '_' {
			continue
		}
		j := skipSpaces(s, i+1)
		v, k, ok := parseNumSlow(s, j)
		if !ok {
			continue
		}
		if k < len(s) {
			d := s[k]
			if d == ':' || d == '/' || isLetter(d) || isDigit(d) || d == '.' && k+1 < len(s) && isDigit(s[k+1]) {
				continue
			}
			if d == '%' {
				k++
			}
		}
		fn(s[b:e], v)
		i = k - 1
	}
}

func FuzzScanKV(f *testing.F) {
	for _, l := range SyntheticMix(200) {
		f.Add(l)
	}
	for _, s := range []string{"loss=0.5", "a_very_long_metric_name/with.parts-and@x = 3", "x:1 y: 2 z=3%", "t: 01:02", "=1", "a=", "lr=1e-3 m=nan"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		type kv struct {
			k string
			v float64
		}
		var got, want []kv
		scanKV(s, func(k string, v float64) { got = append(got, kv{k, v}) })
		scanKVRef(s, func(k string, v float64) { want = append(want, kv{k, v}) })
		if len(got) != len(want) {
			t.Fatalf("scanKV(%q) = %v, want %v", s, got, want)
		}
		for i := range got {
			if got[i].k != want[i].k || math.Float64bits(got[i].v) != math.Float64bits(want[i].v) && !(math.IsNaN(got[i].v) && math.IsNaN(want[i].v)) {
				t.Fatalf("scanKV(%q) = %v, want %v", s, got, want)
			}
		}
	})
}

// A key that is not structural must not match one that is through a
// mis-grouped comparison (regression: "G,oBAl_Step" counted as structural).
func TestStructuralKeyAgreesWithSlow(t *testing.T) {
	for _, k := range []string{"G,oBAl_Step", "global_step", "step", "Step", "loss", "lr", "epoch", "xstep", "steps_x"} {
		if got, want := structuralKey(k), structuralKeySlow(k); got != want {
			t.Errorf("structuralKey(%q) = %v, structuralKeySlow says %v", k, got, want)
		}
	}
}
