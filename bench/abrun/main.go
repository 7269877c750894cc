// Command abrun compares commands (typically two builds of runbox, each
// with a warm daemon of its own) by running them interleaved: in blocks of
// -block runs, the command order shuffled every round, the first run of
// each block dropped (it pays for the switch). Interleaving spreads the
// drift of a shared machine over all commands alike, which running one
// command's runs after the other's does not.
//
//	go run ./bench/abrun -n 200 -block 10 \
//	    '/tmp/old/runbox run --home /tmp/hold --sandbox process -- true' \
//	    'bin/runbox run --home /tmp/hnew --sandbox process -- true'
//
// Commands are split on spaces and exec'd directly (no shell).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 200, "timed runs per command")
	block := flag.Int("block", 10, "runs of one command in a row")
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) == 0 || *block < 2 {
		fmt.Fprintln(os.Stderr, "usage: abrun [-n N] [-block B>=2] 'CMD ARGS...' ...")
		os.Exit(2)
	}
	times := make([][]time.Duration, len(cmds))
	for len(times[0]) < *n {
		for _, j := range rand.Perm(len(cmds)) {
			for k := 0; k < *block; k++ {
				f := strings.Fields(cmds[j])
				c := exec.Command(f[0], f[1:]...)
				start := time.Now()
				if err := c.Run(); err != nil {
					fmt.Fprintf(os.Stderr, "%s: %v\n", cmds[j], err)
					os.Exit(1)
				}
				if k > 0 {
					times[j] = append(times[j], time.Since(start))
				}
			}
		}
	}
	for j, ts := range times {
		slices.Sort(ts)
		var sum time.Duration
		for _, t := range ts {
			sum += t
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		fmt.Printf("%-70s median %6.2f ms  mean %6.2f  p10 %6.2f  p90 %6.2f  (%d runs)\n", cmds[j],
			ms(ts[len(ts)/2]), ms(sum/time.Duration(len(ts))), ms(ts[len(ts)/10]), ms(ts[len(ts)*9/10]), len(ts))
	}
}
