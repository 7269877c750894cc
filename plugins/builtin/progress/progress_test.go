package progress

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/runbox/runbox/plugins/prefilter"
	"github.com/runbox/runbox/sdk"
)

// hostFilter is the host's prefilter for Manifest (its literals and
// confirm entries; plugins/prefilter holds it to hostPasses).
var hostFilter, _ = prefilter.New(Prefilter, PrefilterConfirm)

var update = flag.Bool("update", false, "rewrite testdata/*.json from the parser's output")

// splitLines splits like the host: on \n and \r, dropping a CRLF's \r.
func splitLines(data string) []string {
	var out []string
	for _, l := range strings.Split(data, "\n") {
		for _, p := range strings.Split(l, "\r") {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// run feeds lines to Parse in batches, threading the state through Last
// exactly as the host does. With filter set, only lines that pass the
// host's prefilter (hostFilter, with a table's rows) are sent.
func run(lines []string, batch int, filter bool) *sdk.Progress {
	var last *sdk.Progress
	var buf []string
	state := "" // the plugin's state, kept and sent back as plugins.Parser does
	flush := func() {
		if len(buf) == 0 {
			return
		}
		out := Parse(sdk.ParseInput{Lines: buf, Last: last, State: state})
		state = out.State
		for _, u := range out.Updates {
			if last == nil {
				last = &sdk.Progress{}
			}
			last.Merge(u)
		}
		buf = buf[:0]
	}
	var rows prefilter.Rows // the host's table rows, as plugins.Parser keeps them
	for _, l := range lines {
		if filter {
			ok, before := rows.Match(hostFilter, l)
			buf = append(buf, before...)
			if !ok {
				continue
			}
		}
		buf = append(buf, l)
		if len(buf) == batch {
			flush()
		}
	}
	flush()
	return last
}

func fixtures(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*.log")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return files
}

func TestGolden(t *testing.T) {
	for _, f := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".log")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := run(splitLines(string(data)), 256, true)
			golden := strings.TrimSuffix(f, ".log") + ".json"
			if *update {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			var want *sdk.Progress
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("final state (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatelessBatches: one line per call, one big batch, and the host's
// prefilter on or off must all end in the same state.
func TestStatelessBatches(t *testing.T) {
	for _, f := range fixtures(t) {
		data, _ := os.ReadFile(f)
		lines := splitLines(string(data))
		want := run(lines, 1000, false)
		for _, c := range []struct {
			batch  int
			filter bool
		}{{1, true}, {1, false}, {3, true}, {1000, true}} {
			if diff := cmp.Diff(want, run(lines, c.batch, c.filter)); diff != "" {
				t.Errorf("%s batch=%d filter=%v differs (-all +this):\n%s", f, c.batch, c.filter, diff)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range edgeCases {
		for _, l := range c.lines {
			f.Add(l)
		}
	}
	for _, l := range SyntheticMix(300) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		out := Parse(sdk.ParseInput{Lines: []string{line, line}, Last: &sdk.Progress{Total: 10, Source: "mlx"}})
		for _, u := range out.Updates {
			if u.Percentage < 0 || u.Percentage > 100 {
				t.Fatalf("percentage %v out of range for %q", u.Percentage, line)
			}
			if _, err := json.Marshal(u); err != nil {
				t.Fatalf("update not encodable for %q: %v", line, err)
			}
			if u.Step < 0 || u.Total < 0 || u.Epoch < 0 || u.EpochTotal < 0 || u.ETASeconds < 0 || u.Rate < 0 {
				t.Fatalf("negative field %+v for %q", u, line)
			}
		}
		if len(out.Updates) > 0 && !hostPasses(line) {
			t.Fatalf("%q yields updates but the host would never send it", line)
		}
	})
}

func BenchmarkParseMix(b *testing.B) {
	mix := SyntheticMix(100000)
	b.Run("all-lines", func(b *testing.B) {
		benchBatches(b, mix)
	})
	var filtered []string
	for _, l := range mix {
		if hasPrefilter(l) {
			filtered = append(filtered, l)
		}
	}
	b.Run("prefiltered", func(b *testing.B) {
		// lines/s counts every mix line: the host drops the others.
		benchBatchesScaled(b, filtered, len(mix))
	})
}

func benchBatches(b *testing.B, lines []string) { benchBatchesScaled(b, lines, len(lines)) }

func benchBatchesScaled(b *testing.B, lines []string, counted int) {
	b.ReportAllocs()
	var last *sdk.Progress
	for b.Loop() {
		for i := 0; i < len(lines); i += 256 {
			out := Parse(sdk.ParseInput{Lines: lines[i:min(i+256, len(lines))], Last: last})
			if n := len(out.Updates); n > 0 {
				u := out.Updates[n-1]
				last = &u
			}
		}
	}
	b.ReportMetric(float64(counted)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkParseLine: Parse's cost per line for each progress format of
// the benchmark mix, in batches of 64 copies. Built for wasip1 and run
// under wazero (with a timeout, for close-on-context-done) it shows what
// a format costs in a guest.
func BenchmarkParseLine(b *testing.B) {
	for i, p := range mixProgress {
		batch := slices.Repeat([]string{mixFormat(p, 450, 1000)}, 64)
		b.Run(strconv.Itoa(i), func(b *testing.B) {
			for b.Loop() {
				Parse(sdk.ParseInput{Lines: batch})
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(batch)), "ns/line")
		})
	}
}
