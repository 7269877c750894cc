package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// A signature is one failure rule written as data: a line whose lowercased
// text holds one of Phrases, every group of With (one phrase of each) and
// none of Without is Code. Its phrases are the matcher's gates (sigGates
// derives them), so a phrase can always fire: there is no second list to
// forget. Rules that need more than this (a traceback's structure, the
// exit status, a path to compare with the command) stay code; these are
// the runtime-agnostic wordings — R, Julia, the JVM, Keras, Ultralytics,
// spaCy — that a table says better than a function.
type signature struct {
	Name    string     // for tests and docs
	Code    string     // one of sdk.Codes
	Phrases []string   // any of these, lowercase, 3 bytes or more
	With    [][]string // and one phrase of each group
	Without []string   // and none of these
	Conf    float64
	Message string   // the explanation; the line follows it
	Suggest []string // what to do
	Detail  string   // details key for the first quoted word after Quote
	Quote   string   // where that word starts (lowercase), "" for none
	Retry   bool
	Soft    bool // a mention, not an error report: weak tier
}

// signatures, most specific first: the first that matches a line claims it.
var signatures = []signature{
	{
		Name: "r-missing-package", Code: sdk.CodeModuleNotFound, Conf: 0.9,
		Phrases: []string{"there is no package called"},
		Message: "R could not load a package that is not installed",
		Suggest: []string{"Install it in the library the run uses (`.libPaths()`): `install.packages(\"NAME\")`, or `BiocManager::install(\"NAME\")` for Bioconductor; under Rscript/cron the user library may not be on the path."},
		Detail:  "module", Quote: "package called",
	},
	{
		Name: "julia-missing-package", Code: sdk.CodeModuleNotFound, Conf: 0.9,
		Phrases: []string{"not found in current path"},
		With:    [][]string{{"package "}},
		Message: "Julia could not load a package that is not installed in the active environment",
		Suggest: []string{"Add it to the project the run activates: `julia --project -e 'using Pkg; Pkg.add(\"NAME\")'` (or `Pkg.instantiate()` for a Project.toml that lists it); check JULIA_LOAD_PATH and --project."},
		Detail:  "module", Quote: "package ",
	},
	{
		Name: "jvm-missing-class", Code: sdk.CodeModuleNotFound, Conf: 0.8,
		Phrases: []string{"noclassdeffounderror", "classnotfoundexception"},
		Message: "A JVM class is missing from the classpath (a dependency jar not shipped, or built for another Scala/Spark version)",
		Suggest: []string{"Ship the dependency with the job (`spark-submit --packages group:artifact:version` or an assembly/fat jar), and build against the same Scala and Spark versions the cluster runs."},
	},
	{
		Name: "spacy-missing-model", Code: sdk.CodeModuleNotFound, Conf: 0.85,
		Phrases: []string{"[e050]"},
		Message: "spaCy could not find a pipeline package (a model is a pip package that must be installed)",
		Suggest: []string{"Install the model into the run's environment: `python -m spacy download NAME` (or pip install its wheel), then load it by that name."},
		Detail:  "module", Quote: "find model",
	},
	{
		Name: "r-host-memory", Code: sdk.CodeOOMKilled, Conf: 0.9,
		Phrases: []string{"cannot allocate vector of size", "vector memory exhausted", "reached total allocation of"},
		Message: "R could not allocate memory: the process ran out of host memory",
		Suggest: []string{"Work on the data in pieces (data.table/arrow, chunked reads), free large objects with rm() and gc(), or give the run more memory (R_MAX_VSIZE on macOS)."},
	},
	{
		Name: "runtime-host-memory", Code: sdk.CodeOOMKilled, Conf: 0.85,
		Phrases: []string{"outofmemoryerror()", "gc overhead limit exceeded"},
		Without: []string{"gpu", "cuda"},
		Message: "The runtime ran out of host memory",
		Suggest: []string{"Give the run more memory (or the JVM a larger -Xmx / spark.executor.memory), or process the data in smaller pieces."},
	},
	{
		Name: "dataset-images-missing", Code: sdk.CodeFileNotFound, Conf: 0.85,
		Phrases: []string{"images not found"},
		With:    [][]string{{"dataset", "missing path", ".yaml"}},
		Message: "The dataset's image folder is missing at the path the dataset file names",
		Suggest: []string{"Check the dataset YAML's `path:`, `train:` and `val:` entries: relative paths resolve against `path:` (or the configured datasets directory), not the working directory."},
		Detail:  "path", Quote: "missing path",
	},
	{
		Name: "keras-target-shape", Code: sdk.CodeShapeMismatch, Conf: 0.85,
		Phrases: []string{"error when checking target", "error when checking model target", "error when checking input", "error when checking model input"},
		Message: "The data's shape does not match what the model expects",
		Suggest: []string{"Compare the model's output (or input) shape with the labels' (or inputs') shape: one-hot labels need categorical_crossentropy, integer labels sparse_categorical_crossentropy; reshape or fix the last layer's size."},
	},
	{
		Name: "reticulate-python-error", Code: sdk.CodePythonException, Conf: 0.6,
		Phrases: []string{"error in py_call_impl", "error in py_get_attr_impl"},
		Message: "Python code called from R (reticulate) raised an exception",
		Suggest: []string{"Run `reticulate::py_last_error()` for the Python traceback, and fix the call it names."},
	},
	{
		Name: "library-dir-not-writable", Code: sdk.CodePermissionDenied, Conf: 0.75,
		Phrases: []string{"is not writable", "is not writeable"},
		Message: "A directory the run must write to is not writable by its user",
		Suggest: []string{"Write to a directory the run owns (a user library or a path under the working directory), or fix the directory's permissions."},
	},
	{
		Name: "metal-buffer-limit", Code: sdk.CodeMetalOOM, Conf: 0.75,
		Phrases: []string{"must not exceed"},
		With:    [][]string{{"newbuffer", "buffer validation", "mtlbuffer"}},
		Message: "A Metal buffer is larger than the device allows: Apple GPU memory",
		Suggest: []string{"Use a smaller batch, context or image size so each buffer fits the device's limit (smaller ubatch for llama.cpp)."},
	},
}

// sigGates are the signature matcher's gates: its phrases.
var sigGates = func() []string {
	var g []string
	for _, s := range signatures {
		g = append(g, s.Phrases...)
	}
	return g
}()

func matchSignature(sc *scanner, i int, l *line) bool {
	lc := l.lc
	for k := range signatures {
		s := &signatures[k]
		if !s.matches(lc) {
			continue
		}
		c := cand{code: s.Code, conf: s.Conf, retry: s.Retry, soft: s.Soft, sugg: s.Suggest, details: map[string]string{"rule": s.Name}}
		c.msg = s.Message + ": " + clip(strings.TrimSpace(l.text), 200)
		if s.Detail != "" && s.Quote != "" {
			if w := quotedOrWordAfter(l.text, lc, s.Quote); w != "" {
				c.details[s.Detail] = w
			}
		}
		sc.add(i, c)
		return true
	}
	return false
}

func (s *signature) matches(lc string) bool {
	if !has(lc, s.Phrases...) || has(lc, s.Without...) {
		return false
	}
	for _, g := range s.With {
		if !has(lc, g...) {
			return false
		}
	}
	return true
}

// quotedOrWordAfter is the quoted string after marker, or else the word
// after it: `package called ‘odbc’`, `Package Foo not found`.
func quotedOrWordAfter(text, lc, marker string) string {
	k := strings.Index(lc, marker)
	if k < 0 || k+len(marker) > len(text) {
		return ""
	}
	rest := strings.TrimLeft(text[k+len(marker):], " :")
	if q := firstQuoted(rest); q != "" && strings.Index(rest, q) < 4 {
		return q
	}
	if f := strings.Fields(rest); len(f) > 0 {
		return strings.Trim(f[0], "‘’'\"`,.:;()[]")
	}
	return ""
}
