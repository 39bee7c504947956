"""The package builds and installs with no package index: the in-tree backend (python/_build/backend.py)."""

import base64
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import unittest
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HAVE_PIP = importlib.util.find_spec("pip") is not None


def load_backend() -> Any:
    loader = importlib.machinery.SourceFileLoader("browser_session_mcp_build_backend", str(ROOT / "_build" / "backend.py"))
    module = types.ModuleType(loader.name)
    module.__file__ = loader.path
    loader.exec_module(module)
    return module


class BuildTest(unittest.TestCase):
    def test_wheel_holds_the_package_typed_with_a_valid_record(self) -> None:
        backend = load_backend()
        self.assertEqual(backend.get_requires_for_build_wheel(), [])
        with tempfile.TemporaryDirectory() as out:
            name = backend.build_wheel(out)
            self.assertEqual(name, "browser_session_mcp-0.1.0-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(out, name)) as wheel:
                names = set(wheel.namelist())
                package = (ROOT / "browser_session_mcp").glob("*")
                sources = {p.relative_to(ROOT).as_posix() for p in package if p.is_file() and p.suffix != ".pyc"}
                self.assertTrue(sources <= names, sources - names)
                self.assertIn("browser_session_mcp/py.typed", names)
                metadata = wheel.read("browser_session_mcp-0.1.0.dist-info/METADATA").decode()
                self.assertIn("Name: browser-session-mcp\n", metadata)
                self.assertIn('Requires-Dist: pydantic>=2; extra == "pydantic"', metadata)
                for line in wheel.read("browser_session_mcp-0.1.0.dist-info/RECORD").decode().splitlines():
                    path, digest, size = line.split(",")
                    if not digest:
                        continue
                    data = wheel.read(path)
                    expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual((digest, int(size)), (f"sha256={expected}", len(data)), path)

    @unittest.skipUnless(HAVE_PIP, "pip is not installed")
    def test_pip_installs_it_without_any_index(self) -> None:
        with tempfile.TemporaryDirectory() as target:
            env = {**os.environ, "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
            done = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--no-compile", "--target", target, str(ROOT)],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertTrue((Path(target) / "browser_session_mcp" / "py.typed").is_file())
            check = subprocess.run(
                [sys.executable, "-c", "import browser_session_mcp as b; print(b.__file__)"],
                capture_output=True,
                text=True,
                cwd=target,
                env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                timeout=60,
            )
            self.assertEqual(check.returncode, 0, check.stderr)
            self.assertTrue(check.stdout.strip().startswith(target), check.stdout)


if __name__ == "__main__":
    unittest.main()
