package progress

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/runbox/runbox/plugins/builtin/progress/internal/oldref"
	"github.com/runbox/runbox/sdk"
)

func diffCorpus(t testing.TB) []string {
	var lines []string
	files, _ := filepath.Glob("testdata/*.log")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		lines = append(lines, splitLines(string(data))...)
	}
	for _, c := range edgeCases {
		lines = append(lines, c.lines...)
	}
	lines = append(lines, SyntheticMix(3000)...)
	base := append([]string(nil), lines...)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 60000; i++ {
		a := base[r.Intn(len(base))]
		b := base[r.Intn(len(base))]
		switch r.Intn(6) {
		case 0:
			if len(a) > 0 {
				lines = append(lines, a[r.Intn(len(a)):])
			}
		case 1:
			if len(a) > 0 {
				lines = append(lines, a[:r.Intn(len(a))])
			}
		case 2:
			if len(a) > 0 && len(b) > 0 {
				lines = append(lines, a[:r.Intn(len(a))]+b[r.Intn(len(b)):])
			}
		case 3:
			bs := []byte(a)
			for k := 0; k < 3 && len(bs) > 0; k++ {
				bs[r.Intn(len(bs))] = "0123456789 :/[]{}%|,.'\"=\tEepPsS-"[r.Intn(32)]
			}
			lines = append(lines, string(bs))
		case 4:
			if len(a) > 2 {
				k := r.Intn(len(a))
				lines = append(lines, a[:k]+a[k+1:])
			}
		default:
			lines = append(lines, a+" "+b)
		}
	}
	return lines
}

func TestDiffOld(t *testing.T) {
	lasts := []*sdk.Progress{nil, {Total: 10, Source: "mlx"}, {Source: "fastai", Message: "fastai columns: epoch train_loss valid_loss accuracy time"}, {Total: 100, Source: "tqdm"}}
	n := 0
	for _, l := range diffCorpus(t) {
		for _, last := range lasts {
			in := sdk.ParseInput{Lines: []string{l}, Last: last}
			want := oldref.Parse(in)
			got := Parse(in)
			if diff := cmp.Diff(want, got); diff != "" {
				n++
				if n < 15 {
					t.Errorf("%q last=%v:\n%s", l, last, diff)
				}
			}
		}
	}
	if n > 0 {
		t.Errorf("%d diffs", n)
	}
}

func FuzzDiffOld(f *testing.F) {
	for _, l := range diffCorpus(f)[:3000] {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		for _, last := range []*sdk.Progress{nil, {Total: 10, Source: "mlx"}, {Source: "fastai", Message: "fastai columns: epoch a b time"}} {
			in := sdk.ParseInput{Lines: []string{l}, Last: last}
			if diff := cmp.Diff(oldref.Parse(in), Parse(in)); diff != "" {
				t.Fatalf("%q: %s", l, diff)
			}
		}
	})
}
