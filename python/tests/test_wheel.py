"""The offline wheel: built with the standard library, installable with pip
and no index, versioned as the binary."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

import support

sys.path.insert(0, str(support.HERE.parent))
import build_wheel  # noqa: E402


class VersionTest(unittest.TestCase):
    def test_pep440(self) -> None:
        for describe, want in [
            ("v1.2.3", "1.2.3"),
            ("1.2.3", "1.2.3"),
            ("v1.2.3-4-gabc1234", "1.2.3.post4+gabc1234"),
            ("v1.2.3-4-gabc1234-dirty", "1.2.3.post4+gabc1234.dirty"),
            ("v0.9.0-rc1", "0.9.0rc1"),
            ("v2.0.0-beta.2-1-g0123abc", "2.0.0b2.post1+g0123abc"),
            ("63b7000", "0.0.0+g63b7000"),
            ("63b7000-dirty", "0.0.0+g63b7000.dirty"),
            ("dev", "0.0.0+dev"),
            ("release/Foo_bar", "0.0.0+release.foo.bar"),
        ]:
            with self.subTest(describe=describe):
                self.assertEqual(build_wheel.pep440(describe), want)


class WheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.out = tempfile.mkdtemp()
        cls.path = build_wheel.build(cls.out, "v1.2.3-4-gabc1234")

    def test_layout_and_record(self) -> None:
        self.assertEqual(os.path.basename(self.path), "runbox-1.2.3.post4+gabc1234-py3-none-any.whl")
        with zipfile.ZipFile(self.path) as z:
            names = z.namelist()
            for want in ("runbox/__init__.py", "runbox/py.typed", "runbox/adapters/slop.py",
                         "runbox/adapters/rlm.py", "runbox-1.2.3.post4+gabc1234.dist-info/METADATA"):
                self.assertIn(want, names)
            self.assertFalse([n for n in names if "__pycache__" in n or "tests/" in n])
            di = "runbox-1.2.3.post4+gabc1234.dist-info/"
            self.assertIn("Version: 1.2.3.post4+gabc1234", z.read(di + "METADATA").decode())
            self.assertIn("Tag: py3-none-any", z.read(di + "WHEEL").decode())
            rows = list(csv.reader(io.StringIO(z.read(di + "RECORD").decode())))
            self.assertEqual(sorted(r[0] for r in rows), sorted(names))
            for name, digest, size in rows:
                if name == di + "RECORD":
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(name)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (want, len(data)), name)
            v = z.read("runbox/_version.py").decode()
            self.assertIn("'1.2.3.post4+gabc1234'", v)
            self.assertIn("'v1.2.3-4-gabc1234'", v)

    def test_reproducible(self) -> None:
        with open(self.path, "rb") as f:
            first = f.read()
        again = build_wheel.build(tempfile.mkdtemp(), "v1.2.3-4-gabc1234")
        with open(again, "rb") as f:
            self.assertEqual(f.read(), first)

    def test_pip_installs_it_offline_and_it_works(self) -> None:
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            self.skipTest("no pip for %s" % sys.executable)
        target = tempfile.mkdtemp()
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--no-compile",
                            "--disable-pip-version-check", "--target", target, self.path],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        support.home()
        code = ("import runbox, sys\n"
                "assert runbox.__file__.startswith(sys.argv[1]), runbox.__file__\n"
                "print(runbox.__version__, runbox.run(['echo', 'from the wheel'], sandbox='process').stdout, end='')\n")
        env = dict(os.environ, PYTHONPATH=target)
        p = subprocess.run([sys.executable, "-c", code, target], capture_output=True, text=True, env=env,
                           cwd=target, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "1.2.3.post4+gabc1234 from the wheel\n")


if __name__ == "__main__":
    unittest.main()
