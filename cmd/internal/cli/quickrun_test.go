package cli

import (
	"reflect"
	"strings"
	"testing"
)

// kongRun parses args with the full CLI, as if quickRun did not exist.
func kongRun(t *testing.T, args []string) (*CLI, error) {
	t.Helper()
	full, kctx, err := parseFull(t, args)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(kctx.Command(), "run") {
		t.Fatalf("%q: kong chose %q", args, kctx.Command())
	}
	return full, nil
}

// checkAgrees fails unless kong reads args exactly as quickRun did.
func checkAgrees(t *testing.T, args []string, q *runOnly) {
	t.Helper()
	full, err := kongRun(t, args)
	if err != nil {
		t.Fatalf("%q: quickRun took it, kong rejects it: %v", args, err)
	}
	if !reflect.DeepEqual(q.Run, full.Run) || !reflect.DeepEqual(q.Globals, full.Globals) {
		t.Fatalf("%q:\nquickRun %+v %+v\n    kong %+v %+v", args, q.Run, q.Globals, full.Run, full.Globals)
	}
}

func TestQuickRunAgreesWithKong(t *testing.T) {
	for _, home := range []string{"", "/tmp/from-env"} {
		t.Setenv("RUNBOX_HOME", home)
		for _, line := range []string{
			"run -- true",
			"run --sandbox process -- true",
			"run --sandbox=docker --image busybox -- sh -c 'echo hi'",
			"run -d --json --name job -- python train.py --epochs 3",
			"run --detach --shell --home /x -- echo $HOME",
			"run --home=/y --sandbox auto -- true",
			"run --json -- -x",
			"run -- python -h",
			"run -- --",
			"run --snapshot --no-record -- true",
			"run -d --snapshot -- sh job.sh",
			"--home /x run -- true",
			"--home=/x --json run --sandbox process -- true",
			"--json run -d -- true",
			"--home /x run --name run -- run",
			"run --isolate full -- true",
			"run --isolate=net --sandbox process -- curl x",
			"--home /x run --isolate fs -d -- make",
		} {
			args := strings.Fields(line)
			q, ok := quickRun(args)
			if !ok {
				t.Errorf("%q: quickRun left it to kong", line)
				continue
			}
			checkAgrees(t, args, q)
		}
	}
}

// What quickRun does not take goes to kong whole: help, errors and every
// flag outside its few.
func TestQuickRunLeavesTheRestToKong(t *testing.T) {
	for _, line := range []string{
		"run true",                      // no "--"
		"run --sandbox process --",      // nothing after it
		"run --help -- true",            // help
		"run -h -- true",                //
		"run --version -- true",         // kong prints the version
		"run --sandbox nowhere -- true", // kong's error message
		"run --sandbox process --sandbox docker -- true",
		"run --json=true -- true",
		"run --name -x -- true",
		"run --name",
		"run --timeout 3s -- true",
		"run -w . -- true",
		"run -e A=1 -- true",
		"run -dw . -- true",
		"run --no-such-flag -- true",
		"status -- x",
		"run --home= -- true",
		"--home /x --home /y run -- true", // given twice
		"--home run -- true",              // "run" is the home: no command
		"--home /x status -- x",
		"--json --verbose run -- true",
		"run --isolate strict -- true", // kong's error message
		"run --isolate none --isolate full -- true",
		"run --isolate -- true",
	} {
		if _, ok := quickRun(strings.Fields(line)); ok {
			t.Errorf("%q: quickRun took it", line)
		}
	}
}

// FuzzQuickRun builds command lines from tokens quickRun knows and does
// not know; whatever it takes, kong must read the same way.
func FuzzQuickRun(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{4, 5, 6, 7, 1, 2})
	f.Add([]byte{8, 9, 10, 11, 12, 1, 13})
	tokens := []string{"--", "true", "--sandbox", "process", "--json", "-d", "--detach",
		"--shell", "--home", "/h", "--home=/g", "--name", "job", "--name=x", "--image", "img",
		"--image=busybox", "--sandbox=docker", "auto", "docker", "-x", "--help", "-w", ".",
		"--timeout", "1s", "sh", "-c", "echo hi", "=", "-", "--sandbox=", "--json=false"}
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 16 {
			return
		}
		args := []string{"run"}
		for _, p := range picks {
			args = append(args, tokens[int(p)%len(tokens)])
		}
		q, ok := quickRun(args)
		if !ok {
			return
		}
		checkAgrees(t, args, q)
	})
}
