package process

// StandbyPid is the pid of the waiting standby supervisor, 0 if none.
func (s *Sandbox) StandbyPid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.standby == nil {
		return 0
	}
	return s.standby.proc.pid
}

// DefaultPids is the pids limit a run that sets none gets.
func (s *Sandbox) DefaultPids() (int64, error) { return s.defaultPids() }
