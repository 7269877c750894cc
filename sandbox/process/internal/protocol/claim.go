package protocol

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// A supervisor claims a run's state directory (an exclusive flock on it)
// before it reads SpecFile, and holds the claim until the run is over. A
// daemon that restarts and finds a spec with no pid file asks for the claim
// without waiting (TryClaim): held means a supervisor is taking the run
// this moment; free means none ever will (the daemon died before handing
// it over), so the daemon replaces the spec with TakenFile under the claim
// and starts the run anew. A supervisor that then gets the claim finds
// TakenFile instead of a spec and leaves the run alone (ErrTakenBack): the
// run starts once, either way.

// Claim blocks until this process holds the claim on dir. release drops it.
func Claim(dir string) (release func(), err error) {
	return claim(dir, 0)
}

// TryClaim takes the claim on dir if nobody holds it; ok is false while a
// supervisor does.
func TryClaim(dir string) (release func(), ok bool, err error) {
	release, err = claim(dir, syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return func() {}, false, nil
	}
	return release, err == nil, err
}

// TakenFile marks a spec a restarted daemon took back (it holds nothing:
// the spec's secrets go with the spec).
const TakenFile = "spec.taken-back"

// ErrTakenBack: the spec was gone when the supervisor got its claim, so a
// restarted daemon took the run back to start it itself.
var ErrTakenBack = errors.New("the run was taken back by a restarted daemon before this supervisor read it")

func claim(dir string, flags int) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}, fmt.Errorf("claim %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|flags)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}, fmt.Errorf("claim %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
