package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
)

// helperEnv selects a child-process role when the test binary re-executes
// itself (crash durability, cross-process locking).
const helperEnv = "RUNBOX_STORE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		helperCrash(os.Getenv("RUNBOX_STORE_TEST_DIR"), Options{})
	case "crash-rotate":
		// A small memtable: Pebble rotates and recycles WALs often.
		helperCrash(os.Getenv("RUNBOX_STORE_TEST_DIR"), Options{MemTableSize: 64 << 10})
	case "sync", "nosync":
		helperUnsynced(os.Getenv("RUNBOX_STORE_TEST_DIR"), os.Getenv(helperEnv) == "sync")
	case "hold":
		helperHold(os.Getenv("RUNBOX_STORE_TEST_DIR"))
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(2)
	}
}

// helperCrash writes runs and transitions forever, printing "ack ID STATE"
// after each write returns, until the parent kills it.
func helperCrash(dir string, opts Options) {
	s, err := Open(dir, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	ack := func(id string, st State) { fmt.Fprintf(os.Stdout, "ack %s %s\n", id, st) }
	for {
		r := &Run{Sandbox: "process", Fingerprint: "crash"}
		if err := s.CreateRun(ctx, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ack(r.ID, r.State)
		for _, st := range []State{Preparing, Running, Succeeded} {
			if _, err := s.Transition(ctx, r.ID, st, "crash test", nil); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			ack(r.ID, st)
		}
	}
}

// helperHold opens the store, says "ready", and holds it until stdin closes.
func helperHold(dir string) {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func openTest(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
