"""Where the audited code comes from: a SPEC becomes a folder holding the package's sources.

A SPEC is one of
  * ``installed``   -- the installed distribution's files, located through importlib.metadata
                       (never imported: flash_attn and transformer_engine need CUDA);
  * a version       -- ``4.0.0b36``, ``b36`` (FA4 shorthand), ``2.20.2``: fetched with
                       ``pip download --no-deps`` into the cache and reused offline;
  * ``newest``      -- the newest release on the index (the newest cached one when offline);
  * a wheel / sdist -- a ``.whl``, ``.tar.gz`` or ``.zip`` path, unpacked into the cache;
  * a folder        -- the folder that holds ``flash_attn/`` or ``transformer_engine/`` (a git
                       checkout or an unpacked release), or that package folder itself.

The cache lives under ``$XDG_CACHE_HOME/fa4-audit`` (default ``~/.cache/fa4-audit``); set
``FA4_AUDIT_CACHE`` to move it, ``FA4_AUDIT_OFFLINE=1`` to never touch the network.
Everything that fails raises :class:`AuditError` with a one-line message.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from analyzer.errors import AuditError


@dataclass(frozen=True)
class Package:
    """What we know about one audited package."""

    key: str            # "fa4" | "te"
    dist: str           # distribution name on the package index
    import_dir: str     # the top-level package folder inside a release / checkout
    marker: str         # a path (relative to the root) that proves it is this package


FA4 = Package("fa4", "flash-attn-4", "flash_attn", "flash_attn/cute/interface.py")
TE = Package("te", "transformer-engine", "transformer_engine", "transformer_engine/__init__.py")
PACKAGES = {"fa4": FA4, "te": TE}

_VERSION_RE = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")
_FA4_SHORT_RE = re.compile(r"^b\d+$")


@dataclass(frozen=True)
class Source:
    """A resolved SPEC: ``root`` is the folder that holds the package folder."""

    package: str                 # "fa4" | "te"
    spec: str                    # the SPEC as the user gave it
    origin: str                  # installed | release | wheel | sdist | tree | transcribed
    root: Path | None            # None only for origin == "transcribed"
    version: str | None          # None when it cannot be told (a bare checkout)

    @property
    def package_dir(self) -> Path:
        assert self.root is not None
        return self.root / PACKAGES[self.package].import_dir

    def label(self) -> str:
        """Short column label: the version when known, else the spec."""
        if self.version:
            return self.version
        return self.spec

    def to_json(self) -> dict:
        return {"spec": self.spec, "origin": self.origin, "version": self.version,
                "root": str(self.root) if self.root else None}


# ----------------------------------------------------------------------------- cache

def cache_dir() -> Path:
    """The cache folder (created on demand)."""
    env = os.environ.get("FA4_AUDIT_CACHE")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = Path(xdg) / "fa4-audit"
    return base


def offline() -> bool:
    return os.environ.get("FA4_AUDIT_OFFLINE", "") not in ("", "0", "false", "no")


def _release_dir(pkg: Package, version: str) -> Path:
    return cache_dir() / "releases" / pkg.dist / version


def cached_versions(package: str) -> list[str]:
    """Versions of a package unpacked in the cache, oldest first."""
    pkg = PACKAGES[package]
    d = cache_dir() / "releases" / pkg.dist
    if not d.is_dir():
        return []
    out = [p.name for p in d.iterdir() if (p / ".complete").is_file()]
    return sorted(out, key=version_key)


def version_key(v: str):
    """Sort key for PEP 440-ish versions of the shapes these two projects use."""
    m = re.match(r"^(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?", v)
    if not m:
        return ((0,), 0, 0, 0, v)
    nums = tuple(int(x) for x in m.group(1).split("."))
    pre_rank = {"a": 0, "b": 1, "rc": 2, None: 3}[m.group(2)]
    pre_n = int(m.group(3) or 0)
    post = int(m.group(4) or 0)
    return (nums, pre_rank, pre_n, post, "")


# ----------------------------------------------------------------------------- unpacking

def _unpack_archive(archive: Path, dest: Path, pkg: Package) -> Path:
    """Unpack a wheel or sdist into ``dest`` (atomically) and return the package root."""
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest.parent))
    try:
        name = archive.name.lower()
        try:
            if name.endswith((".whl", ".zip")):
                with zipfile.ZipFile(archive) as zf:
                    bad = zf.testzip()
                    if bad is not None:
                        raise AuditError(f"{archive}: corrupt archive member {bad}")
                    for member in zf.namelist():
                        _check_member_path(member, archive)
                    zf.extractall(tmp)
            elif name.endswith((".tar.gz", ".tgz", ".tar")):
                with tarfile.open(archive) as tf:
                    members = tf.getmembers()
                    for m in members:
                        _check_member_path(m.name, archive)
                        if m.issym() or m.islnk() or m.isdev():
                            raise AuditError(f"{archive}: refusing link or device member {m.name}")
                    tf.extractall(tmp)
            else:
                raise AuditError(f"{archive}: not a wheel (.whl) or sdist (.tar.gz/.zip)")
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError) as exc:
            raise AuditError(f"{archive}: corrupt or truncated archive ({type(exc).__name__}: {exc})",
                             hint="delete it and fetch again") from None
        root = _find_root(tmp, pkg)
        if root is None:
            raise AuditError(f"{archive}: no {pkg.marker} inside; is this a {pkg.dist} release?")
        rel = root.relative_to(tmp)
        (tmp / ".complete").write_text(json.dumps({"archive": archive.name, "root": str(rel)}))
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
        return dest / rel
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _check_member_path(member: str, archive: Path) -> None:
    p = Path(member)
    if p.is_absolute() or ".." in p.parts:
        raise AuditError(f"{archive}: refusing unsafe member path {member!r}")


def _find_root(top: Path, pkg: Package) -> Path | None:
    """The folder under ``top`` (depth <= 3) that holds ``pkg.marker``."""
    frontier = [top]
    for _ in range(4):
        nxt = []
        for d in frontier:
            if (d / pkg.marker).is_file():
                return d
            try:
                nxt.extend(sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink()))
            except OSError:
                continue
        frontier = nxt
    return None


def _unpacked_root(dest: Path) -> Path:
    info = json.loads((dest / ".complete").read_text())
    return dest / info["root"]


# ----------------------------------------------------------------------------- index

def _pip(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    # Short network timeouts: an unreachable index must fail in seconds, not minutes, so the
    # cache fallback (offline use) kicks in quickly.
    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check",
           "--timeout", os.environ.get("FA4_AUDIT_PIP_TIMEOUT", "15"), "--retries", "1"]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AuditError(f"pip {' '.join(args[:1])} timed out after {timeout:.0f}s",
                         hint="the package index may be unreachable; retry, or run offline from the cache") from None


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines()
             if ln.strip() and not ln.startswith("WARNING: Location")]
    errs = [ln for ln in lines if ln.startswith("ERROR")]
    return (errs or lines or ["no output"])[-1]


def index_ttl() -> float:
    """Seconds a listing of the index is reused without asking again (FA4_AUDIT_INDEX_TTL,
    default 3600; 0 always asks)."""
    try:
        return float(os.environ.get("FA4_AUDIT_INDEX_TTL", "3600"))
    except ValueError:
        return 3600.0


def index_versions(package: str, *, fresh: bool = False) -> list[str]:
    """Every release of the package on the index (pre-releases included), oldest first.

    A listing younger than :func:`index_ttl` is reused (``fresh=True`` asks anyway). Offline,
    or when the index cannot be reached, the listing from the last successful query is used;
    with neither, AuditError.
    """
    pkg = PACKAGES[package]
    memo = cache_dir() / "index" / f"{pkg.dist}.json"
    if not fresh and memo.is_file() and not offline():
        try:
            if time.time() - memo.stat().st_mtime < index_ttl():
                return json.loads(memo.read_text())
        except (OSError, ValueError):
            pass
    if not offline():
        proc = _pip("index", "versions", "--pre", pkg.dist, timeout=120)
        m = re.search(r"Available versions:\s*(.+)", proc.stdout)
        if proc.returncode == 0 and m:
            versions = sorted((v.strip() for v in m.group(1).split(",") if v.strip()), key=version_key)
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps(versions))
            return versions
    if memo.is_file():
        return json.loads(memo.read_text())
    cached = cached_versions(package)
    if cached:
        return cached
    why = "offline (FA4_AUDIT_OFFLINE)" if offline() else _last_error_line(proc.stdout + proc.stderr)
    raise AuditError(f"cannot list {pkg.dist} releases: {why}; the cache has none either")


def _release_eq(a: str, b: str) -> bool:
    """PEP 440 equality of two plain versions, up to trailing zero release segments
    (``2.14`` == ``2.14.0``; ``4.0.0b30`` == ``4.0b30``)."""
    def norm(v: str):
        m = re.match(r"v?(\d+(?:\.\d+)*)(.*)$", v.strip().lower())
        if not m:
            return v
        rel = [int(x) for x in m.group(1).split(".")]
        while len(rel) > 1 and rel[-1] == 0:
            rel.pop()
        return tuple(rel), m.group(2)
    return a == b or norm(a) == norm(b)


def fetch_release(package: str, version: str) -> Path:
    """The unpacked release in the cache, downloading it first if needed. Returns its root."""
    pkg = PACKAGES[package]
    dest = _release_dir(pkg, version)
    if (dest / ".complete").is_file():
        return _unpacked_root(dest)
    # the same release spelled another way (``2.14`` is ``2.14.0``, PEP 440) already cached
    same = [v for v in cached_versions(package) if _release_eq(v, version)]
    if same:
        return _unpacked_root(_release_dir(pkg, same[0]))
    if offline():
        raise AuditError(f"{pkg.dist}=={version} is not in the cache ({dest}) and FA4_AUDIT_OFFLINE is set")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".dl-") as tmp:
        proc = _pip("download", "--no-deps", "--pre", "--no-build-isolation", "-q", "-d", tmp,
                    f"{pkg.dist}=={version}")
        files = sorted(Path(tmp).iterdir())
        if proc.returncode != 0 or not files:
            raise AuditError(f"could not fetch {pkg.dist}=={version}: "
                             f"{_last_error_line(proc.stdout + proc.stderr)}",
                             hint="check the version (`pip index versions --pre "
                                  f"{pkg.dist}`) or the network; cached releases work offline")
        archive = files[0]
        keep = cache_dir() / "archives" / pkg.dist
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy2(archive, keep / archive.name)
        return _unpack_archive(archive, dest, pkg)


# ----------------------------------------------------------------------------- resolve

def _tree_version(root: Path, pkg: Package) -> str | None:
    """Best-effort version of a folder: a dist-info beside the package, else a VERSION file."""
    norm = pkg.dist.replace("-", "_")
    for info in sorted(root.glob("*.dist-info")):
        name = info.name[: -len(".dist-info")]
        if name.lower().startswith(norm.lower() + "-"):
            return name.split("-", 1)[1]
    for rel in ("build_tools/VERSION.txt", "VERSION.txt", f"{pkg.import_dir}/VERSION"):
        f = root / rel
        if f.is_file():
            text = f.read_text(errors="replace").strip()
            if text and len(text) < 40:
                return text
    return None


def resolve(package: str, spec: str) -> Source:
    """Turn a SPEC (see module doc) into a :class:`Source`, fetching or unpacking as needed."""
    if package not in PACKAGES:
        raise AuditError(f"unknown package {package!r}")
    pkg = PACKAGES[package]
    spec = spec.strip()
    if not spec:
        raise AuditError(f"empty --{package} SPEC")
    if spec == "transcribed":
        return Source(package, spec, "transcribed", None, None)
    if spec == "installed":
        return _resolve_installed(pkg, spec)
    if spec in ("newest", "latest"):
        versions = index_versions(package)
        if not versions:
            raise AuditError(f"no {pkg.dist} release found on the index or in the cache")
        version = versions[-1]
        return Source(package, spec, "release", fetch_release(package, version), version)
    if package == "fa4" and _FA4_SHORT_RE.match(spec):
        spec_v = "4.0.0" + spec
        return Source(package, spec, "release", fetch_release(package, spec_v), spec_v)
    if _VERSION_RE.match(spec) and not Path(spec).exists():
        return Source(package, spec, "release", fetch_release(package, spec), spec)

    path = Path(spec).expanduser()
    if not path.exists() and not path.is_symlink():
        raise AuditError(f"--{package} {spec}: no such file or folder, and not a version, "
                         f"'installed', 'newest' or 'transcribed'")
    try:
        path = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise AuditError(f"--{package} {spec}: cannot resolve path ({exc})") from None
    if path.is_file():
        if not os.access(path, os.R_OK):
            raise AuditError(f"--{package} {spec}: file is not readable")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        dest = cache_dir() / "archives-unpacked" / pkg.dist / f"{path.name}-{digest}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        root = _unpacked_root(dest) if (dest / ".complete").is_file() else _unpack_archive(path, dest, pkg)
        origin = "wheel" if path.name.endswith(".whl") else "sdist"
        return Source(package, spec, origin, root, _tree_version(root, pkg) or _version_from_name(path.name, pkg))
    if path.is_dir():
        if not os.access(path, os.R_OK | os.X_OK):
            raise AuditError(f"--{package} {spec}: folder is not readable")
        if path.name == pkg.import_dir and (path.parent / pkg.marker).is_file():
            path = path.parent
        if not (path / pkg.marker).is_file():
            raise AuditError(f"--{package} {spec}: no {pkg.marker} under this folder",
                             hint=f"give the folder that holds {pkg.import_dir}/")
        return Source(package, spec, "tree", path, _tree_version(path, pkg))
    raise AuditError(f"--{package} {spec}: neither a file nor a folder")


def _version_from_name(filename: str, pkg: Package) -> str | None:
    norm = pkg.dist.replace("-", "_")
    m = re.match(rf"^{re.escape(norm)}-([^-]+?)(?:-|\.tar\.gz$|\.zip$)", filename, re.I)
    return m.group(1) if m else None


def _resolve_installed(pkg: Package, spec: str) -> Source:
    try:
        dist = importlib.metadata.distribution(pkg.dist)
    except importlib.metadata.PackageNotFoundError:
        raise AuditError(f"{pkg.dist} is not installed in this Python ({sys.executable})",
                         hint="give a version or a path instead of 'installed'") from None
    root = Path(str(dist.locate_file(""))).resolve()
    if not (root / pkg.marker).is_file():
        raise AuditError(f"installed {pkg.dist} {dist.version}: {pkg.marker} not found under {root}")
    return Source(pkg.key, spec, "installed", root, dist.version)


# folders the walk never enters: version-control stores (they hold no module Python loads)
_VCS_DIRS = frozenset({".git", ".hg", ".svn"})


def _environment(dirpath: Path, dirnames, filenames) -> bool:
    """A Python environment kept inside the tree (a virtualenv, a conda env, an installed
    ``site-packages``): the packages the tree runs against, not the tree's own code (FA4
    installed there is FA4 itself, read from its release, not judged as the tree's code)."""
    if "__init__.py" in filenames:
        return False        # a package of the tree, whatever else the folder holds
    return ("pyvenv.cfg" in filenames or "conda-meta" in dirnames
            or dirpath.name in ("site-packages", "dist-packages"))


def walk_tree(top: Path, skipped: list | None = None):
    """Every folder of the tree Python may import from, top-down, as (folder, sorted names of
    its files). Hidden folders and ``__pycache__`` are entered (``sys.path`` can point into
    them); symlinked folders are followed (a package may hold one), except into a folder
    already on the way down (a loop). Version-control stores and Python environments kept in
    the tree are not entered; ``skipped`` (a list) receives each such folder."""
    def scan(d: Path, above: frozenset):
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            return
        files, subdirs = [], []
        for e in entries:
            try:
                is_dir = e.is_dir()          # follows a symlink
            except OSError:
                is_dir = False
            (subdirs if is_dir else files).append(e.name)
        if _environment(d, subdirs, files):
            if skipped is not None:
                skipped.append(d)
            return
        yield d, files
        for name in subdirs:
            if name in _VCS_DIRS:
                if skipped is not None:
                    skipped.append(d / name)
                continue
            sub = d / name
            try:
                real = os.path.realpath(sub)
            except OSError:
                continue
            if real in above:            # a link back up the walk: a loop
                continue
            yield from scan(sub, above | {real})

    yield from scan(top, frozenset({os.path.realpath(top)}))


def iter_py_files(root: Path, package_dir: str | None = None, walked=None):
    """Every ``.py`` file under ``root/package_dir`` (or ``root``), sorted (``walk_tree``:
    hidden folders, ``__pycache__`` and symlinked folders are read, a symlink loop cannot
    trap the walk). ``walked``: that walk's (folder, files) already made by the caller.

    A ``.py`` entry that is a FIFO, device or socket (directly or through a symlink) raises
    AuditError: reading it would block forever or never end. A dangling symlink is yielded;
    reading it fails, and the readers report that."""
    import stat as _stat

    top = root / package_dir if package_dir else root
    for dirpath, filenames in (walked if walked is not None else walk_tree(top)):
        for fn in filenames:
            if fn.endswith(".py"):
                p = dirpath / fn
                try:
                    mode = os.stat(p).st_mode
                except OSError:
                    yield p  # dangling link / vanished: the reader reports it
                    continue
                if not _stat.S_ISREG(mode):
                    raise AuditError(f"{p}: not a regular file (FIFO, device or socket); "
                                     f"refusing to read it")
                yield p
