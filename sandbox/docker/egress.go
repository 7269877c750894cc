package docker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/egress"
)

// startEgress starts the proxy of a container run with --allow-net: a
// helper process (egress.HelperMain, this runbox binary), detached from
// the daemon as the container is, serving unix sockets in the run's box,
// where the container's init carries the run's connections (the
// container itself has no network). It returns once the sockets are
// there.
func (s *Sandbox) startEgress(spec sandbox.Spec, box string) error {
	if spec.Network != "" && spec.Network != "none" {
		return fmt.Errorf("docker start: --allow-net needs a container without network, not --network %s", spec.Network)
	}
	b, err := json.Marshal(egress.Lists{Allow: spec.AllowNet, Setup: spec.SetupAllowNet})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(spec.StateDir, egress.ListsFile), b, 0o600); err != nil {
		return fmt.Errorf("docker start: egress lists: %w", err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf, err := os.OpenFile(filepath.Join(spec.StateDir, "egress.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.opts.Exe, egress.HelperArg, spec.StateDir, box)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("docker start: the egress proxy: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it ends while we live
	want := []string{}
	if len(spec.AllowNet) > 0 {
		want = append(want, egress.BridgeSocket)
	}
	if len(spec.Setup) > 0 && (len(spec.SetupAllowNet) > 0 || len(spec.AllowNet) > 0) {
		want = append(want, egress.SetupBridgeSocket)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ready := true
		for _, w := range want {
			if _, err := os.Stat(filepath.Join(box, w)); err != nil {
				ready = false
			}
		}
		if ready {
			return nil
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(filepath.Join(spec.StateDir, "egress.log"))
			return fmt.Errorf("docker start: the egress proxy exited (%v): %s", err, b)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return errors.New("docker start: the egress proxy did not start within 10s")
		}
	}
}
