"""What to install for one of copter's optional extras (``plot``, ``ray``), as an error message says it.

The hint names the extra's own requirements, read from this install's metadata (``pip install 'matplotlib>=3.8'``),
not ``pip install 'copter[plot]'``: copter is installed from a checkout (``pip install .``), and in an environment
without it that line asks the package index for a project called ``copter``, which is not this one (a user's trial
in session 35). From a checkout, ``pip install '.[plot]'`` installs the same.
"""

from __future__ import annotations

import re

DIST = "copter"  #: this project's distribution name (pyproject.toml)
_EXTRA = re.compile(r"""^\s*([^;]+?)\s*;\s*extra\s*==\s*["']([^"']+)["']\s*$""")


def extra_requirements(extra: str) -> list[str]:
    """The requirement strings (PEP 508, e.g. ``"matplotlib>=3.8"``) of the optional extra ``extra`` of this
    install, in pyproject order; [] when the install's metadata cannot be read (a source tree on sys.path) or
    has no such extra."""
    from importlib import metadata

    try:
        reqs = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for req in reqs:
        m = _EXTRA.match(req)
        if m and m.group(2) == extra:
            out.append(m.group(1).replace(" ", ""))
    return out


def install_command(extra: str, package: str) -> str:
    """The shell command that installs the optional extra ``extra`` into this environment, e.g.
    ``pip install 'matplotlib>=3.8'`` (its requirements from this install's metadata, else the import name
    ``package`` alone)."""
    reqs = extra_requirements(extra) or [package]
    return "pip install " + " ".join(f"'{r}'" for r in reqs)


def install_note(extra: str) -> str:
    """Where the requirements come from: ``copter's optional extra "plot"; from a checkout: pip install '.[plot]'``."""
    return f"copter's optional extra \"{extra}\"; from a checkout: pip install '.[{extra}]'"


def needs(extra: str, what: str) -> str:
    """An option's help text for what it needs, e.g. ``needs Ray, the optional extra ray: pip install '.[ray]' from a
    checkout`` (no metadata read: help is built when the command's options are)."""
    return f"needs {what}, the optional extra {extra}: pip install '.[{extra}]' from a checkout"


def install_hint(extra: str, package: str) -> str:
    """:func:`install_command` followed by :func:`install_note` in brackets, for an error message."""
    return f"{install_command(extra, package)} ({install_note(extra)})"
