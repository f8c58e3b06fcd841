"""The command line's conventions (issue 12, item 3): argparse's usual usage errors with a
suggestion for a near miss, --version, and [tool.fa4-audit] defaults from the audited tree."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analyzer import __version__
from analyzer.cli import build_parser, config_defaults


def test_typo_subcommand_is_argparse_form_with_a_suggestion(cli):
    """Guards: 'fa4-audit: error: fa4-audit: argument COMMAND' (the prefix twice) and no hint."""
    r = cli("audti", "--te", "x")
    assert r.code == 2 and r.out == ""
    lines = r.err.splitlines()
    assert lines[0].startswith("usage: fa4-audit ")
    assert lines[-1].startswith("fa4-audit: error: argument COMMAND: invalid choice: 'audti', "
                                "maybe you meant 'audit'?")
    assert r.err.count("fa4-audit: error:") == 1 and "error: fa4-audit:" not in r.err


def test_no_suggestion_for_a_far_miss_and_sub_parser_errors_name_the_sub_command(cli):
    r = cli("xyzzy")
    assert r.code == 2 and "maybe you meant" not in r.err and "invalid choice: 'xyzzy'" in r.err
    r = cli("audit", "--bogus")
    assert r.code == 2
    assert r.err.splitlines()[0].startswith("usage: fa4-audit audit ")
    assert r.err.splitlines()[-1].startswith("fa4-audit audit: error: ")


def test_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == f"fa4-audit {__version__}"
    p = subprocess.run([sys.executable, "-m", "analyzer", "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == f"fa4-audit {__version__}"


def _tree(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n" + table)
    return str(tmp_path)


def test_tool_table_gives_defaults_the_command_line_overrides(tmp_path):
    tree = _tree(tmp_path, '[tool.fa4-audit]\nfa4 = ["4.0.0b11", "newest"]\nstrict = true\n'
                           'wrapper = "my_norm"\n')
    argv = ["audit", "--te", tree]
    extra = config_defaults(argv, "audit")
    assert extra == ["--fa4", "4.0.0b11", "--fa4", "newest", "--strict", "--wrapper", "my_norm"]
    args = build_parser(argv).parse_args(argv + extra)      # --fa4 is required: now given
    assert args.fa4 == ["4.0.0b11", "newest"] and args.strict and args.wrapper == ["my_norm"]
    # the command line wins, key by key
    argv = ["audit", f"--te={tree}", "--fa4", "b36"]
    assert config_defaults(argv, "audit") == ["--strict", "--wrapper", "my_norm"]
    # a command that has no such option gets nothing from it
    assert config_defaults(["sites", "--tree", tree], "sites") == ["--wrapper", "my_norm"]
    assert config_defaults(["history", "--te", tree], "history") == []


def test_bad_tool_table_is_a_one_line_usage_error(cli, tmp_path):
    tree = _tree(tmp_path, "[tool.fa4-audit]\nfa4s = ['b36']\n")
    r = cli("audit", "--te", tree)
    assert r.code == 2 and r.err.count("\n") == 1
    assert "unknown key(s) in [tool.fa4-audit]: fa4s" in r.err
    tree = _tree(tmp_path, "[tool.fa4-audit]\nstrict = 'yes'\n")
    r = cli("audit", "--te", tree, "--fa4", "b36")
    assert r.code == 2 and "strict must be true or false" in r.err


def test_no_table_no_change(tmp_path):
    assert config_defaults(["audit", "--te", str(tmp_path)], "audit") == []
    assert config_defaults(["audit", "--te", "2.20.2"], "audit") == []
