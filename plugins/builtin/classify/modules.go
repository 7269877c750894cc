package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// pipNames maps import names to the PyPI distribution that provides them
// when the two differ.
var pipNames = map[string]string{
	"cv2": "opencv-python", "sklearn": "scikit-learn", "PIL": "pillow", "yaml": "pyyaml", "bs4": "beautifulsoup4",
	"skimage": "scikit-image", "dotenv": "python-dotenv", "attr": "attrs", "Crypto": "pycryptodome", "dateutil": "python-dateutil",
	"jwt": "PyJWT", "serial": "pyserial", "usb": "pyusb", "magic": "python-magic", "docx": "python-docx", "pptx": "python-pptx",
	"fitz": "pymupdf", "MySQLdb": "mysqlclient", "psycopg2": "psycopg2-binary", "faiss": "faiss-cpu", "OpenGL": "PyOpenGL",
	"wx": "wxPython", "gi": "PyGObject", "zmq": "pyzmq", "git": "GitPython", "absl": "absl-py", "flash_attn": "flash-attn",
	"llama_cpp": "llama-cpp-python", "umap": "umap-learn", "Bio": "biopython", "igraph": "python-igraph", "telegram": "python-telegram-bot",
	"google.protobuf": "protobuf", "google": "protobuf", "pkg_resources": "setuptools", "distutils": "setuptools", "mlx_lm": "mlx-lm",
	"pytorch_lightning": "pytorch-lightning", "lightning": "lightning", "torchvision": "torchvision", "jose": "python-jose",
	"sentence_transformers": "sentence-transformers", "huggingface_hub": "huggingface-hub", "tensorflow_datasets": "tensorflow-datasets",
	"tensorflow_hub": "tensorflow-hub", "Levenshtein": "levenshtein", "websocket": "websocket-client", "socks": "pysocks",
	"ruamel": "ruamel.yaml", "slugify": "python-slugify", "multipart": "python-multipart", "editdistance": "editdistance",
	"pydantic_settings": "pydantic-settings", "google.generativeai": "google-generativeai", "speech_recognition": "SpeechRecognition",
	"sounddevice": "sounddevice", "soundfile": "soundfile", "lxml": "lxml", "tkinter": "", "_tkinter": "", "_lzma": "", "_sqlite3": "", "_ctypes": "", "_bz2": "",
}

// localNames are module names that are usually the project's own code.
var localNames = map[string]bool{
	"src": true, "utils": true, "util": true, "models": true, "model": true, "data": true, "config": true, "configs": true, "common": true,
	"lib": true, "app": true, "core": true, "helpers": true, "modules": true, "tools": true, "scripts": true, "train": true, "dataset": true,
}

func matchModule(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeModuleNotFound, conf: 0.95, details: map[string]string{}}
	switch {
	case strings.Contains(lc, "no module named"):
		mod := quotedAfter(l.text, lc, "no module named")
		if mod == "" {
			mod = unquote(strings.Fields(restAfter(l.text, lc, "no module named") + " ")[0])
		}
		moduleCand(sc, &c, mod)
	case strings.Contains(lc, "cannot import name"):
		name := quotedAfter(l.text, lc, "cannot import name")
		from := ""
		if k := strings.Index(lc, "cannot import name"); k >= 0 {
			if j := strings.Index(lc[k:], " from "); j >= 0 {
				from = firstQuoted(l.text[k+j:])
			}
		}
		c.details["name"], c.details["module"] = name, from
		c.msg = "`" + name + "` could not be imported from `" + orDefault(from, "?") + "`."
		switch {
		case has(lc, "circular import", "partially initialized"):
			c.msg += " It is a circular import (or a local file shadows the package)."
			c.sugg = []string{"Rename any local file named like the package (e.g. a `" + topLevel(from) + ".py` in your project), or move the import inside the function that needs it."}
		default:
			c.msg += " The installed version of `" + topLevel(from) + "` does not provide it (too old or too new)."
			c.sugg = []string{
				"Check `pip show " + pipName(topLevel(from)) + "` and install the version the code expects (`pip install -U " + pipName(topLevel(from)) + "` or pin the version from the project's requirements).",
				"Make sure no local file or folder named `" + topLevel(from) + "` shadows the installed package.",
			}
		}
	case has(lc, "cannot open shared object file", "error while loading shared libraries", "glibcxx_"):
		lib := segmentBefore(l.text, lc, ": cannot open shared object file")
		if lib == "" {
			lib = quotedAfter(l.text, lc, "version")
		}
		c.details["library"] = lib
		c.msg = "A native library is missing: " + orDefault(lib, clip(l.text, 160)) + "."
		c.sugg = libSuggestions(lib, lc)
	case strings.Contains(lc, "attempted relative import"):
		c.msg = "A relative import ran outside a package: the file was run as a script."
		c.sugg = []string{"Run it as a module from the project root: `python -m package.module`, or change the relative import to an absolute one."}
	case has(lc, "not found in your environment"):
		mod := ""
		if k := strings.Index(lc, "requires the "); k >= 0 {
			mod = strings.Fields(l.text[k+13:] + " ")[0]
		}
		if k := strings.Index(lc, "environment: "); k >= 0 {
			mod = strings.Trim(strings.Fields(l.text[k+13:] + " ")[0], ".,")
		}
		moduleCand(sc, &c, mod)
	case has(lc, "no matching distribution found for", "could not find a version that satisfies the requirement"):
		pkg := restAfter(l.text, lc, "found for ")
		if pkg == "" {
			pkg = restAfter(l.text, lc, "the requirement ")
		}
		pkg = strings.Fields(pkg + " ")[0]
		c.details["package"], c.conf = pkg, 0.85
		c.msg = "pip could not find a version of `" + pkg + "` for this Python and platform."
		c.sugg = []string{
			"Check the package name and version pin, and that it supports this Python version (`python --version`) and OS/CPU.",
			"With no network (e.g. runbox's Docker sandbox default), pip reports this too: enable network access or use a local wheelhouse.",
			"For CUDA builds of torch, add the right index: `--index-url https://download.pytorch.org/whl/cu121`.",
		}
	case has(lc, "_array_api not found", "compiled using numpy 1.x cannot be run in", "numpy.core.multiarray failed to import",
		"numpy.core._multiarray_umath failed to import", "numpy.dtype size changed, may indicate binary incompatibility"):
		c.details["module"], c.details["kind"] = "numpy", "numpy_abi"
		c.msg = "A compiled package was built against a different numpy major version (1.x vs 2.x) and cannot be imported: " + clip(l.text, 160)
		c.sugg = []string{
			"Install a numpy that matches the compiled packages: `pip install \"numpy<2\"`, or upgrade the package named in the traceback to a build for numpy 2.",
			"Pin numpy in the project's requirements so the environment stays consistent.",
		}
	case has(lc, "dll load failed", "[winerror 126]"):
		c.msg = "A compiled extension could not load its DLL: " + clip(l.text, 200)
		c.sugg = []string{"Install the Microsoft Visual C++ Redistributable and reinstall the package; make sure its build matches your Python version and architecture."}
	case sc.roles[i] == roleExc && strings.HasSuffix(sc.excType(i), "ImportError"), strings.HasPrefix(lc, "importerror:"):
		c.conf = 0.8
		c.msg = "An import failed: " + clip(strings.TrimPrefix(l.text, "ImportError: "), 200)
		if k := strings.Index(lc, "pip install "); k >= 0 {
			cmd := strings.Trim(l.text[k:], "`'\".")
			if e := strings.IndexAny(cmd, "`'\""); e > 0 {
				cmd = cmd[:e]
			}
			c.details["install"] = cmd
			c.sugg = []string{"Run `" + cmd + "` in the environment the run uses."}
		} else {
			c.sugg = []string{"Install or upgrade the package the message names, in the same interpreter/env the run uses."}
		}
	default:
		return false
	}
	for k, v := range c.details {
		if v == "" {
			delete(c.details, k)
		}
	}
	sc.add(i, c)
	return true
}

func topLevel(mod string) string {
	if k := strings.IndexByte(mod, '.'); k >= 0 {
		return mod[:k]
	}
	return mod
}

func pipName(top string) string {
	if p, ok := pipNames[top]; ok && p != "" {
		return p
	}
	return strings.ReplaceAll(top, "_", "-")
}

func moduleCand(sc *scanner, c *cand, mod string) {
	mod = strings.TrimRight(mod, ".,;")
	top := topLevel(mod)
	c.details["module"] = mod
	if mod == "" {
		c.msg = "A Python module could not be imported."
		c.sugg = []string{"Install the missing package in the interpreter the run uses."}
		return
	}
	pkg := pipName(top)
	if full, ok := pipNames[mod]; ok && full != "" {
		pkg = full
	}
	env := "Make sure the run uses the interpreter you installed into: call `python -m pip install ...` with the same `python`, or activate the venv/conda env in the command (`which python`)."
	if sc.in.Sandbox == "docker" {
		env = "In the Docker sandbox the image's Python is used: install the package in the image (or in the command before the script)."
	}
	switch {
	case mod == "torch._six":
		c.msg = "`torch._six` was removed in PyTorch 2.0; the code (or a dependency) is older than the installed torch."
		c.sugg = []string{"Upgrade the package that imports torch._six, or replace `from torch._six import inf` with `from math import inf`."}
	case mod == "distutils" || top == "distutils":
		c.msg = "`distutils` was removed from Python 3.12."
		c.sugg = []string{"`pip install setuptools` (it provides distutils), or use Python ≤ 3.11."}
	case strings.HasPrefix(mod, "numpy.core") || strings.HasPrefix(mod, "numpy._core"):
		c.msg = "`" + mod + "` is missing: the data or a compiled package was built for a different numpy major version (1.x vs 2.x)."
		c.sugg = []string{"Use the same numpy major version that wrote the file/built the package (`pip install \"numpy<2\"` or upgrade the other package)."}
	case hasKey(pipNames, top) && pipNames[top] == "":
		c.msg = "The standard-library module `" + mod + "` is missing: this Python was built without it."
		c.sugg = []string{"Install the system package (e.g. `apt-get install python3-tk` for tkinter, liblzma-dev/libsqlite3-dev before building Python), or use a full Python build."}
	case localNames[top]:
		c.msg = "Python could not import `" + mod + "`, which looks like the project's own code: the project root is not on the import path."
		c.sugg = []string{"Run from the project root (the directory that contains `" + top + "/`), or set PYTHONPATH to it, or install the project (`pip install -e .`).", env}
	case mod != top:
		c.msg = "Python could not import `" + mod + "`."
		c.sugg = []string{
			"If `" + top + "` is installed, its version lacks `" + mod + "`: install the version the code expects (`pip install -U " + pipName(top) + "`), or check for a local `" + top + ".py` shadowing it.",
			"If `" + top + "` is not installed: `pip install " + pkg + "`.", env,
		}
	default:
		c.msg = "Python could not import `" + mod + "`: the package is not installed in the interpreter that ran the script."
		c.sugg = []string{"Install it: `pip install " + pkg + "` (or in a conda env: `conda install -c conda-forge " + pkg + "`).", env}
	}
	if pkg != top && pkg != "" {
		c.details["package"] = pkg
		if !strings.Contains(c.msg, pkg) {
			c.msg += " (the pip package is `" + pkg + "`)"
		}
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

func libSuggestions(lib, lc string) []string {
	low := strings.ToLower(lib)
	switch {
	case strings.HasPrefix(low, "libgl.so"):
		return []string{"Install the system OpenGL library (`apt-get install -y libgl1`), or use `opencv-python-headless` instead of opencv-python."}
	case strings.HasPrefix(low, "libgthread") || strings.HasPrefix(low, "libglib"):
		return []string{"Install GLib (`apt-get install -y libglib2.0-0`)."}
	case has(low, "libcuda", "libcublas", "libcudnn", "libnvrtc", "libcufft", "libcusparse", "libnccl", "libnvinfer"):
		return []string{"The CUDA/cuDNN libraries the package was built against are missing or a different version: install the framework build matching your CUDA (or the nvidia-*-cu12 pip wheels) and check LD_LIBRARY_PATH.", "In Docker, use an image with the matching CUDA runtime."}
	case strings.HasPrefix(low, "libsndfile"):
		return []string{"Install libsndfile (`apt-get install -y libsndfile1`)."}
	case strings.Contains(lc, "glibcxx_"):
		return []string{"The C++ runtime is older than the package needs: `conda install -c conda-forge libstdcxx-ng`, or upgrade the OS's libstdc++."}
	}
	return []string{"Install the system package that provides " + orDefault(lib, "the library") + " (apt-file search / your distro's package search), or use a wheel that bundles it."}
}

var gateModule = []string{"no module named", "cannot import name", "importerror", "modulenotfounderror", "shared object file", "shared libraries",
	"dll load failed", "winerror 126", "relative import", "_array_api", "compiled using numpy", "failed to import", "binary incompatibility", "not found in your environment", "no matching distribution", "satisfies the requirement", "glibcxx_"}
