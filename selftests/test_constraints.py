"""constraints.txt pins the suite's runtime, so that CI users judge with the same releases every run.

It holds exactly the distributions the product needs at run time (its dependencies, theirs in turn, and
the ``parallel`` extra's pytest-xdist), each as ``name==version``, each pin inside pyproject.toml's range
for a direct dependency; the self-tests' material (the ``dev`` extra) is not in it.  ``.ci/run`` installs
with it, so a pin that does not resolve fails CI; so do the CI recipes of docs/ci/, which cache pip on it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[0-9][^\s;#]*)$")


def pins() -> dict[str, Version]:
    found: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pin = PIN.match(line.strip())
        assert pin, f"constraints.txt: not a pin: {line!r}"
        name = canonicalize_name(pin["name"])
        assert name not in found, f"constraints.txt pins {name} twice"
        found[name] = Version(pin["version"])
    return found


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in (*project["dependencies"], *project["optional-dependencies"]["parallel"])]


def closure(requirements: list[Requirement]) -> set[str]:
    """The distributions these requirements pull in, as installed here (the environment's metadata)."""
    seen: set[str] = set()
    todo = [(requirement, "") for requirement in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        first_time = name not in seen
        seen.add(name)
        for wanted in [""] * first_time + sorted(requirement.extras):
            for text in metadata.distribution(name).requires or []:
                todo.append((Requirement(text), wanted))
    return seen


def test_every_pin_is_one_exact_version() -> None:
    assert len(pins()) >= 20


def test_every_direct_dependency_is_pinned_inside_its_range() -> None:
    pinned = pins()
    for requirement in runtime_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is a runtime dependency and is not pinned in constraints.txt"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"constraints.txt pins {name}=={pinned[name]}, outside pyproject.toml's {requirement.specifier}"
        )


def test_the_pins_are_the_runtime_and_nothing_else() -> None:
    """Every distribution the runtime pulls in is pinned (a transitive release changes the judge too), and
    nothing of the self-tests' material is."""
    needed = closure(runtime_requirements())
    pinned = set(pins())
    assert needed - pinned == set(), "pulled in at run time, not pinned"
    assert pinned - needed == set(), "pinned, not needed at run time"
    assert {"schemathesis", "hypothesis", "pytest"} <= pinned
    assert not {"ruff", "mypy", "playwright", "cosmic-ray", "django", "flask"} & pinned


def test_every_library_the_package_imports_is_a_declared_dependency() -> None:
    """An import that only works because another dependency happens to pull its library in (urllib3 through
    requests, MarkupSafe through Jinja2) breaks the day that dependency stops needing it."""
    imported: set[str] = set()
    for module in (ROOT / "src" / "petstore_contract").rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        imported |= set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", text, re.MULTILINE))
    providers = metadata.packages_distributions()
    third_party = {name for name in imported if name in providers and name != "petstore_contract"}
    declared = {canonicalize_name(r.name) for r in runtime_requirements()}
    undeclared = {
        name: providers[name] for name in third_party if not {canonicalize_name(d) for d in providers[name]} & declared
    }
    assert undeclared == {}, f"imported by src/petstore_contract, not declared in pyproject.toml: {undeclared}"
    assert {"urllib3", "markupsafe", "schemathesis", "yaml"} <= third_party


def _gitlab_job(pipeline: dict[str, Any], name: str) -> dict[str, Any]:
    """A job with what it extends merged in (GitLab's ``extends``, one or more levels)."""
    job = dict(pipeline[name])
    parent = job.pop("extends", None)
    return {**_gitlab_job(pipeline, parent), **job} if parent else job


def _scripts(github: dict[Any, Any], gitlab: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(recipe, job, a shell script of it)"""
    for job_name, job in github["jobs"].items():
        for step in job.get("steps", []):
            if "run" in step:
                yield "github", job_name, str(step["run"])
    for job_name, job in gitlab.items():
        if isinstance(job, dict):
            for key in ("before_script", "script"):
                for entry in job.get(key, []):
                    yield "gitlab", job_name, str(entry)


def test_ci_recipes_install_the_pinned_runtime_and_cache_pip() -> None:
    """Every install of docs/ci/ uses constraints.txt (the same Schemathesis, Hypothesis and pytest every
    run), a job that passes -n installs the parallel extra (pytest-xdist is optional), and pip's cache is
    keyed on the pins."""
    github = yaml.safe_load((ROOT / "docs" / "ci" / "github-actions.yml").read_text(encoding="utf-8"))
    gitlab = yaml.safe_load((ROOT / "docs" / "ci" / "gitlab-ci.yml").read_text(encoding="utf-8"))
    for name in ("github", "gitlab"):
        by_job: dict[str, str] = {}
        for recipe, job, script in _scripts(github, gitlab):
            if recipe == name:
                by_job[job] = by_job.get(job, "") + script + "\n"
        for job, script in by_job.items():
            installs = [line for line in script.splitlines() if "pip install" in line]
            if not installs:
                continue
            assert all("-c constraints.txt" in line for line in installs), (name, job, installs)
            if re.search(r"pytest .*-n \d", script):
                assert any(".[parallel]" in line for line in installs), (name, job, "runs -n without pytest-xdist")
    for job in github["jobs"].values():
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/setup-python"):
                assert step["with"].get("cache") == "pip", step
                assert step["with"].get("cache-dependency-path") == "constraints.txt", step
    assert gitlab["variables"]["PIP_CACHE_DIR"].endswith(".cache/pip")
    for name in gitlab:
        job = gitlab[name]
        if isinstance(job, dict) and any("pip install" in str(line) for line in job.get("before_script", [])):
            cache = _gitlab_job(gitlab, name)["cache"]
            assert cache["key"]["files"] == ["constraints.txt"] and ".cache/pip" in cache["paths"], name


def test_ci_installs_the_readme_commands_with_the_constraints() -> None:
    """.ci/run installs as the README's two commands do (the product alone, then the dev extra), with the pins."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:25])
    assert ".venv/bin/pip install -q -e . && .venv/bin/python -m pytest\n" in first_screen
    assert ".venv/bin/pip install -q -e '.[dev]' && .venv/bin/python -m pytest selftests" in first_screen
    lean = ci.index(".venv/bin/pip install -q -c constraints.txt -e .\n")
    main_job = ci.index(".venv/bin/python -m pytest\n")
    dev = ci.index(".venv/bin/pip install -q -c constraints.txt -e '.[dev]'")
    assert lean < main_job < dev < ci.index(".venv/bin/python -m pytest selftests"), (
        "the main job runs on the product alone"
    )
