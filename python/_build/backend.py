"""A PEP 517 / PEP 660 build backend in the standard library only.

Why: pip builds a package in an isolated environment and downloads its build backend (setuptools, flit, ...) from an
index first; where no index is reachable that fails, and `--no-build-isolation` with Python 3.11's setuptools 65
fails too (it needs the separate `wheel` package). With this backend `pip install ./python` needs no download.
It builds a pure-Python wheel (py3-none-any) of browser_session_mcp with the metadata of pyproject.toml [project].
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "browser_session_mcp"
# Fixed timestamps make the same sources give the same archive bytes.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _project() -> Dict[str, Any]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the flat string keys of [project] are all the backend needs
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return {key: value for key, value in re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', section, re.M)}
    return tomllib.loads(text)["project"]


def _metadata() -> str:
    project = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        "License: MIT",
    ]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    lines.append("Description-Content-Type: text/markdown")
    readme = ROOT / "README.md"
    body = readme.read_text(encoding="utf-8") if readme.exists() else ""
    return "\n".join(lines) + "\n\n" + body


def _names() -> Tuple[str, str]:
    project = _project()
    dist = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return dist, project["version"]


def _dist_info() -> str:
    dist, version = _names()
    return f"{dist}-{version}.dist-info"


def _package_files() -> List[Path]:
    files = []
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files.append(path)
    return files


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, entries: List[Tuple[str, bytes]]) -> str:
    dist, version = _names()
    filename = f"{dist}-{version}-py3-none-any.whl"
    info = _dist_info()
    entries = entries + [
        (f"{info}/METADATA", _metadata().encode("utf-8")),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: browser-session-mcp _build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = "\n".join([_record_line(name, data) for name, data in entries] + [f"{info}/RECORD,,"]) + "\n"
    entries.append((f"{info}/RECORD", record.encode("utf-8")))
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            item = zipfile.ZipInfo(name, ZIP_DATE)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(item, data)
    return filename


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(
    wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None
) -> str:
    """The package's files under browser_session_mcp/, plus the dist-info."""
    entries = [(path.relative_to(ROOT).as_posix(), path.read_bytes()) for path in _package_files()]
    return _write_wheel(wheel_directory, entries)


def build_editable(
    wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None
) -> str:
    """`pip install -e ./python`: a .pth file puts this directory on sys.path, so edits apply at once."""
    return _write_wheel(wheel_directory, [(f"{PACKAGE}.pth", (str(ROOT) + "\n").encode("utf-8"))])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """The sources a wheel is built from: pyproject.toml, README.md, this backend and the package."""
    dist, version = _names()
    base = f"{dist}-{version}"
    filename = f"{base}.tar.gz"
    sources = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve()] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for path in sources:
            if path.exists():
                _add(sdist, f"{base}/{path.relative_to(ROOT).as_posix()}", path.read_bytes())
        _add(sdist, f"{base}/PKG-INFO", _metadata().encode("utf-8"))
    return filename


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    archive.addfile(info, io.BytesIO(data))
