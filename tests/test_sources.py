"""SPEC resolution: every failure is a one-line AuditError, never a traceback or a guess."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from analyzer import sources
from analyzer.errors import AuditError


@pytest.mark.network
def test_release_is_fetched_once_then_served_offline(isolated_cache, monkeypatch):
    """Guards: a second audit re-downloading (slow, breaks offline use) or not finding the cache."""
    src = sources.resolve("fa4", "4.0.0b11")
    assert src.origin == "release" and src.version == "4.0.0b11"
    assert (src.root / "flash_attn" / "cute" / "interface.py").is_file()
    monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    again = sources.resolve("fa4", "b11")  # shorthand, offline: must come from the cache
    assert again.root == src.root
    assert sources.cached_versions("fa4") == ["4.0.0b11"]


def test_offline_without_cache_is_an_error(isolated_cache, monkeypatch):
    """Guards: offline use silently treating a missing release as empty (reporting 'safe')."""
    monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    with pytest.raises(AuditError, match="not in the cache"):
        sources.resolve("fa4", "4.0.0b12")
    with pytest.raises(AuditError, match="cannot list"):
        sources.index_versions("fa4")


@pytest.mark.network
def test_unknown_release_version_is_an_error(isolated_cache):
    """Guards: a typo'd version being reported as a pip traceback or as an empty audit."""
    with pytest.raises(AuditError, match="could not fetch flash-attn-4==4.0.0b999"):
        sources.resolve("fa4", "4.0.0b999")


def test_missing_path_is_an_error(tmp_path):
    with pytest.raises(AuditError, match="no such file or folder"):
        sources.resolve("te", str(tmp_path / "nope"))


def test_folder_without_package_is_an_error(tmp_path):
    """Guards: auditing an unrelated folder and finding 'nothing wrong'."""
    (tmp_path / "x.py").write_text("print(1)\n")
    with pytest.raises(AuditError, match="no transformer_engine/__init__.py"):
        sources.resolve("te", str(tmp_path))


def _make_fake_fa4_wheel(path: Path, body: str = "def f():\n    return 1\n") -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("flash_attn/cute/interface.py", body)
        zf.writestr("flash_attn_4-4.0.0b99.dist-info/METADATA", "Name: flash-attn-4\nVersion: 4.0.0b99\n")
    return path


def test_wheel_path_is_unpacked_into_the_cache(isolated_cache, tmp_path):
    whl = _make_fake_fa4_wheel(tmp_path / "flash_attn_4-4.0.0b99-py3-none-any.whl")
    src = sources.resolve("fa4", str(whl))
    assert src.origin == "wheel" and src.version == "4.0.0b99"
    assert (src.package_dir / "cute" / "interface.py").read_text().startswith("def f")
    assert isolated_cache in src.root.parents


def test_truncated_wheel_is_an_error(isolated_cache, tmp_path):
    """Guards: a corrupt download being read as an empty package."""
    whl = _make_fake_fa4_wheel(tmp_path / "flash_attn_4-4.0.0b99-py3-none-any.whl")
    data = whl.read_bytes()
    bad = tmp_path / "flash_attn_4-4.0.0b98-py3-none-any.whl"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(AuditError, match="corrupt or truncated"):
        sources.resolve("fa4", str(bad))


def test_archive_with_escaping_member_is_refused(isolated_cache, tmp_path):
    """Guards: a hostile wheel writing outside the cache (zip slip)."""
    bad = tmp_path / "evil.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("../../escaped.py", "x = 1\n")
    with pytest.raises(AuditError, match="unsafe member path"):
        sources.resolve("fa4", str(bad))
    assert not (tmp_path.parent / "escaped.py").exists()


def test_tree_accepts_the_package_folder_itself(tmp_path):
    pkg = tmp_path / "transformer_engine"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for spec in (tmp_path, pkg):
        src = sources.resolve("te", str(spec))
        assert src.origin == "tree" and src.root == tmp_path


def test_symlink_loop_does_not_trap_the_walk(tmp_path):
    """Guards: a symlink loop in a tree hanging the file walk."""
    pkg = tmp_path / "transformer_engine"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "loop").symlink_to(pkg, target_is_directory=True)
    files = list(sources.iter_py_files(tmp_path, "transformer_engine"))
    assert files == [pkg / "__init__.py"]


def test_version_key_orders_prereleases():
    vs = ["4.0.0b9", "4.0.0b10", "4.0.0b3", "4.0.0", "4.0.0rc1"]
    assert sorted(vs, key=sources.version_key) == ["4.0.0b3", "4.0.0b9", "4.0.0b10", "4.0.0rc1", "4.0.0"]


def test_release_spelled_with_fewer_zeros_is_served_from_the_cache(isolated_cache, monkeypatch):
    """Guards: offline ``--te 2.14`` failing with "not in the cache" while ``2.14.0`` (the same
    release under PEP 440) is cached -- and a different release being served for it."""
    pkg = sources.PACKAGES["te"]
    root = sources._release_dir(pkg, "2.14.0")
    (root / "transformer_engine").mkdir(parents=True)
    (root / "transformer_engine" / "__init__.py").write_text("")
    (root / ".complete").write_text('{"root": "."}')
    monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    assert sources.fetch_release("te", "2.14") == sources.fetch_release("te", "2.14.0")
    with pytest.raises(AuditError, match="not in the cache"):
        sources.fetch_release("te", "2.14.1")
    assert sources._release_eq("4.0.0b30", "4.0b30")
    assert not sources._release_eq("4.0.0b30", "4.0.0b3")
