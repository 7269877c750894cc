package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
)

// SlurmFlags are the flags of --sandbox slurm; SpecFlags embeds them.
type SlurmFlags struct {
	Partition    string            `help:"Slurm partition to submit to (slurm sandbox)." placeholder:"NAME" group:"Slurm"`
	Account      string            `help:"Slurm account to charge (slurm sandbox)." placeholder:"NAME" group:"Slurm"`
	QOS          string            `help:"Slurm quality of service (slurm sandbox)." name:"qos" placeholder:"NAME" group:"Slurm"`
	SlurmOpt     map[string]string `help:"Any other sbatch option, KEY=VALUE → --KEY=VALUE (e.g. constraint=a100). Repeatable." name:"slurm-opt" placeholder:"KEY=VALUE" group:"Slurm"`
	QueueTimeout time.Duration     `help:"Give up (SANDBOX_ERROR) on a Slurm job still PENDING after this long." placeholder:"DUR" group:"Slurm"`
}

// slurmRequest adds the Slurm settings to req; they need --sandbox slurm.
func (f *SlurmFlags) slurmRequest(req *api.RunRequest) error {
	if f.Partition == "" && f.Account == "" && f.QOS == "" && len(f.SlurmOpt) == 0 && f.QueueTimeout == 0 {
		return nil
	}
	if req.Sandbox != "slurm" {
		return fmt.Errorf("--partition, --account, --qos, --slurm-opt and --queue-timeout need --sandbox slurm")
	}
	if f.QueueTimeout < 0 {
		return fmt.Errorf("--queue-timeout %s: a duration cannot be negative", f.QueueTimeout)
	}
	for k := range f.SlurmOpt {
		if k == "" || strings.HasPrefix(k, "-") {
			return fmt.Errorf("--slurm-opt %q: want KEY=VALUE with the sbatch option's name, no dashes (e.g. constraint=a100)", k)
		}
	}
	req.Slurm = &api.SlurmRequest{Partition: f.Partition, Account: f.Account, QOS: f.QOS,
		Options: f.SlurmOpt, QueueTimeout: api.Duration(f.QueueTimeout)}
	return nil
}
