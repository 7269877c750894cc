package api

import "github.com/runbox/runbox/sdk"

// Failure is why a run failed and what to do next: exactly one failure
// code (contract, DESIGN §4).
type Failure struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	Suggestions []string `json:"suggestions,omitempty"`
	Retryable   bool     `json:"retryable"`
	Evidence    []string `json:"evidence,omitempty"`
	Confidence  float64  `json:"confidence"` // 0..1
	// Details holds code-specific facts: "module" for MODULE_NOT_FOUND,
	// "exception" for PYTHON_EXCEPTION, "path" for FILE_NOT_FOUND, ...
	Details map[string]string `json:"details,omitempty"`
	// Plugin names the plugin that produced this answer.
	Plugin string `json:"plugin,omitempty"`
	// PluginVersion is that plugin's version.
	PluginVersion string `json:"plugin_version,omitempty"`
}

// Progress is a run's latest progress.
type Progress struct {
	Step       int64   `json:"step,omitempty"`
	Total      int64   `json:"total,omitempty"`
	Percentage float64 `json:"percentage,omitempty"`
	Phase      string  `json:"phase,omitempty"`
	Epoch      int64   `json:"epoch,omitempty"`
	EpochTotal int64   `json:"epoch_total,omitempty"`
	EpochExact float64 `json:"epoch_exact,omitempty"` // a fractional epoch as printed (0.58)
	ETASeconds float64 `json:"eta_seconds,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	RateUnit   string  `json:"rate_unit,omitempty"` // it/s, samples/s, tok/s
	// Metrics may hold NaN and ±Inf, written as the JSON strings "NaN",
	// "Infinity" and "-Infinity" (the plugin wire's form, sdk.Metrics).
	Metrics sdk.Metrics `json:"metrics,omitempty"`
	Message string      `json:"message,omitempty"`
	Source  string      `json:"source,omitempty"` // which format matched: runbox, tqdm, keras, ...
}

// Analysis is the answer of `runbox analyze` (contract).
type Analysis struct {
	Failure  *Failure  `json:"failure"`
	Progress *Progress `json:"progress"`
}
