package api

// SlurmRequest holds the Slurm-only settings of a run (--sandbox slurm).
type SlurmRequest struct {
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	QOS       string `json:"qos,omitempty"`
	// Options are extra sbatch options: KEY=VALUE → --KEY=VALUE.
	Options map[string]string `json:"options,omitempty"`
	// QueueTimeout gives up on a job still PENDING after this long.
	QueueTimeout Duration `json:"queue_timeout,omitempty"`
}
