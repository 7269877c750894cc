package process

// StandbyPid is the pid of the waiting plain standby supervisor, 0 if none.
func (s *Sandbox) StandbyPid() int { return s.standbyPid(plain) }

// OwnUserNSStandbyPid is the pid of the waiting standby in a user
// namespace of its own, 0 if none.
func (s *Sandbox) OwnUserNSStandbyPid() int { return s.standbyPid(ownUserNS) }

func (s *Sandbox) standbyPid(k superKind) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.standby[k] == nil {
		return 0
	}
	return s.standby[k].proc.pid
}

// DefaultPids is the pids limit a run that sets none gets.
func (s *Sandbox) DefaultPids() (int64, error) { return s.defaultPids() }
