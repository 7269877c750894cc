package gpu

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseNvidiaSMIRecorded(t *testing.T) {
	for _, tc := range []struct {
		file            string
		n               int
		first           Device
		lastIndex, last string
	}{
		{"rtx3060ti.csv", 1, Device{Index: "0", UUID: "GPU-2a4bad3b-9fe3-7031-914d-384254e92908", Name: "NVIDIA GeForce RTX 3060 Ti", MemoryMiB: 8192}, "0", "GPU-2a4bad3b-9fe3-7031-914d-384254e92908"},
		{"a800x8.csv", 8, Device{Index: "0", UUID: "GPU-fd189414-e0f6-58a0-7031-fefe0ce43b1d", Name: "NVIDIA A800-SXM4-80GB", MemoryMiB: 81920}, "7", "GPU-349fa89c-151d-340e-c147-94506daf1357"},
		{"h100_nounits.csv", 1, Device{Index: "0", UUID: "GPU-00000000-0000-0000-0000-000000000000", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559}, "0", "GPU-00000000-0000-0000-0000-000000000000"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			devs, err := ParseNvidiaSMI(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(devs) != tc.n {
				t.Fatalf("%d devices, want %d", len(devs), tc.n)
			}
			if devs[0] != tc.first {
				t.Errorf("first = %+v, want %+v", devs[0], tc.first)
			}
			if l := devs[len(devs)-1]; l.Index != tc.lastIndex || l.UUID != tc.last {
				t.Errorf("last = %+v", l)
			}
		})
	}
}

func TestParseNvidiaSMIBad(t *testing.T) {
	for _, in := range []string{
		"NVIDIA H100 80GB HBM3, 81559 MiB\n", // the planner's two-column query, not ours
		"x, GPU-1, A100, 40960 MiB\n",
	} {
		if _, err := ParseNvidiaSMI([]byte(in)); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
	// Memory unknown ([N/A] on MIG/vGPU) is still a GPU.
	devs, err := ParseNvidiaSMI([]byte("0, GPU-1, GRID A100D-4C, [N/A]\n\n"))
	if err != nil || len(devs) != 1 || devs[0].MemoryMiB != 0 {
		t.Fatalf("%+v %v", devs, err)
	}
}

func TestParseDeclared(t *testing.T) {
	known, _ := ParseNvidiaSMI([]byte("0, GPU-a, A100, 40960 MiB\n1, GPU-b, A100, 40960 MiB\n2, GPU-c, A100, 40960 MiB\n"))
	devs, err := ParseDeclared("0, 2", known)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{devs[0].Index, devs[1].Index, devs[1].UUID}; !reflect.DeepEqual(got, []string{"0", "2", "GPU-c"}) {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"", " , ", "0,0", "gpu0"} {
		if _, err := ParseDeclared(bad, known); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAllocator(t *testing.T) {
	a := NewAllocator([]Device{{Index: "0"}, {Index: "1"}})
	if err := a.Check(3); err == nil || !strings.Contains(err.Error(), "2 known (0, 1)") {
		t.Errorf("Check(3) = %v", err)
	}
	if err := NewAllocator(nil).Check(1); err == nil || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("no GPUs: %v", err)
	}
	if got := a.TakeFrom("r1", 1, a.Free()); !reflect.DeepEqual(got, []string{"0"}) {
		t.Fatalf("r1 got %v", got)
	}
	if got := a.TakeFrom("r2", 1, a.Free()); !reflect.DeepEqual(got, []string{"1"}) {
		t.Fatalf("r2 got %v", got)
	}
	if got := a.TakeFrom("r3", 1, a.Free()); got != nil {
		t.Fatalf("r3 got %v with none free", got)
	}
	a.Release("r1")
	if got := a.TakeFrom("r3", -1, a.Free()); got != nil {
		t.Fatalf("all with one free: %v", got)
	}
	if got := a.TakeFrom("r3", 1, a.Free()); !reflect.DeepEqual(got, []string{"0"}) {
		t.Fatalf("r3 got %v", got)
	}
	if got := a.Held("r3"); !reflect.DeepEqual(got, []string{"0"}) {
		t.Errorf("held %v", got)
	}
}
