package host

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/jsonfile"
)

// A sweep's run template (with the client's real environment) waits in a
// 0600 file until every member is created, as a queued run's spec does.
const templateFile = "template.json"

func (e *Engine) sweepDir(id string) string { return filepath.Join(e.cfg.Home, "sweeps", id) }

func saveTemplate(dir string, req api.RunRequest) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return jsonfile.Write(filepath.Join(dir, templateFile), req, false)
}

func loadTemplate(dir string) (api.RunRequest, error) {
	var req api.RunRequest
	b, err := os.ReadFile(filepath.Join(dir, templateFile))
	if err != nil {
		return req, err
	}
	err = json.Unmarshal(b, &req)
	return req, err
}

func removeTemplate(dir string) {
	_ = os.Remove(filepath.Join(dir, templateFile))
	_ = os.Remove(dir)
}
