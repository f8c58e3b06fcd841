"""docs/ci.md stays true: its YAML parses, its fa4-audit command lines parse with the real CLI,
its [tool.fa4-audit] example is what the CLI accepts, and the hook it names is the shipped one."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import yaml

from analyzer.cli import CONFIG_KEYS, OTHER_CONFIG_KEYS, build_parser

DOC = Path(__file__).resolve().parent.parent / "docs" / "ci.md"
HOOKS = DOC.parent.parent / ".pre-commit-hooks.yaml"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def _fa4_audit_commands() -> list[list[str]]:
    cmds = []
    for block in _blocks("yaml"):
        for job in (yaml.safe_load(block) or {}).get("jobs", {}).values():
            for step in job["steps"]:
                run = step.get("run", "")
                if run.startswith("fa4-audit "):
                    cmds.append(shlex.split(run)[1:])
    return cmds


def test_workflow_yaml_parses_and_uploads_the_audit_sarif():
    workflows = [yaml.safe_load(b) for b in _blocks("yaml") if "jobs:" in b]
    assert len(workflows) == 1
    steps = next(iter(workflows[0]["jobs"].values()))["steps"]
    upload = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif")]
    assert upload and upload[0]["with"]["sarif_file"] == "fa4-audit-out/audit.sarif"
    assert workflows[0]["permissions"]["security-events"] == "write"


def test_its_command_lines_parse_with_the_real_cli():
    cmds = _fa4_audit_commands()
    assert cmds
    for argv in cmds:
        args = build_parser(argv).parse_args(argv)
        assert args.command == "audit" and args.out == "fa4-audit-out"


def test_its_tool_table_uses_only_known_keys():
    table = tomllib.loads(_blocks("toml")[0])["tool"]["fa4-audit"]
    assert set(table) <= set(CONFIG_KEYS) | OTHER_CONFIG_KEYS


def test_the_hook_it_names_is_shipped_with_the_same_entry():
    shipped = yaml.safe_load(HOOKS.read_text())[0]
    local = [h for b in _blocks("yaml") for r in (yaml.safe_load(b) or {}).get("repos", [])
             if r.get("repo") == "local" for h in r["hooks"]]
    assert local and local[0]["entry"] == shipped["entry"] and local[0]["id"] == shipped["id"]
    assert f"id: {shipped['id']}" in DOC.read_text()
