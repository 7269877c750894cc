package wasmdata

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// testModule builds a module with one memory of 4 pages (imported when
// importMem) and the given data segments: an offset < 0 makes a passive one.
func testModule(importMem, dataCount bool, segs []testSegment) []byte {
	sec := func(out []byte, id byte, body []byte) []byte {
		out = append(out, id)
		out = appendUleb(out, uint32(len(body)))
		return append(out, body...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	if importMem {
		out = sec(out, 2, []byte("\x01\x03env\x03mem\x02\x00\x04"))
	} else {
		out = sec(out, 5, []byte{1, 0, 4})
	}
	if dataCount {
		out = sec(out, 12, appendUleb(nil, uint32(len(segs))))
	}
	body := appendUleb(nil, uint32(len(segs)))
	for _, s := range segs {
		if s.off < 0 {
			body = append(body, 1)
		} else {
			body = append(body, 0, 0x41)
			body = appendSleb(body, s.off)
			body = append(body, 0x0b)
		}
		body = appendUleb(body, uint32(len(s.data)))
		body = append(body, s.data...)
	}
	return sec(out, 11, body)
}

type testSegment struct {
	off  int32
	data []byte
}

// testSegments: 200 segments of 1-40 non-zero bytes with gaps of 8 bytes
// to 10 KiB between them, shuffled.
func testSegments() []testSegment {
	r := rand.New(rand.NewPCG(1, 2))
	var segs []testSegment
	off := int32(16)
	for i := range 200 {
		d := make([]byte, 1+r.IntN(40))
		for k := range d {
			d[k] = byte(1 + r.IntN(255))
		}
		segs = append(segs, testSegment{off, d})
		gap := 8 + r.IntN(64)
		if i%50 == 49 {
			gap = 10 << 10
		}
		off += int32(len(d) + gap)
	}
	r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	return segs
}

// initialMemory instantiates wasm (interpreted, no start function) and
// returns its memory as the data segments left it.
func initialMemory(t *testing.T, wasm []byte, withWASI bool) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if withWASI {
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	}
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(b)
}

// dataSegments counts the data segments of a module.
func dataSegments(wasm []byte) uint32 {
	for i := 8; i < len(wasm); {
		size, n := uleb32(wasm[i+1:])
		if wasm[i] == 11 {
			c, _ := uleb32(wasm[i+1+n:])
			return c
		}
		i += 1 + n + int(size)
	}
	return 0
}

func TestMerge(t *testing.T) {
	segs := testSegments()
	orig := testModule(false, false, segs)
	merged := Merge(orig)
	if bytes.Equal(merged, orig) {
		t.Fatal("segments not merged")
	}
	if c := dataSegments(merged); c != 4 {
		// 3 gaps of 10 KiB split the 200 segments into 4 runs
		t.Errorf("merged into %d segments, want 4", c)
	}
	if !bytes.Equal(initialMemory(t, merged, false), initialMemory(t, orig, false)) {
		t.Fatal("merged module starts with other memory contents")
	}

	// What it does not fully understand stays as it is.
	overlap := append(slices.Clone(segs), testSegment{segs[0].off + 1, []byte{7}})
	passive := append(slices.Clone(segs), testSegment{-1, []byte{7}})
	for name, wasm := range map[string][]byte{
		"imported memory":    testModule(true, false, segs),
		"data count section": testModule(false, true, segs),
		"overlap":            testModule(false, false, overlap),
		"passive segment":    testModule(false, false, passive),
		"few segments":       testModule(false, false, segs[:10]),
		"not wasm":           []byte("#!/bin/sh\necho hello\n"),
	} {
		if got := Merge(wasm); !bytes.Equal(got, wasm) {
			t.Errorf("%s: module changed", name)
		}
	}
	// Truncated or corrupt, it never panics and never grows a broken module
	// into a valid-looking one: it only ever returns its input or a merge.
	for n := range len(orig) {
		if got := Merge(orig[:n]); !bytes.Equal(got, orig[:n]) {
			t.Fatalf("truncated to %d bytes: module changed", n)
		}
	}
}

// For builtins_test.go, an external test (plugins/builtin imports the
// runtime, which imports this package).
var (
	InitialMemory = initialMemory
	DataSegments  = dataSegments
)
