"""Which options of :func:`solver.rounds.compare` (``copter compare``) the chosen baselines read: one given that
none reads is a usage error (exit 2) naming it, nothing run, rather than dropped. ``compare --baseline highs
--k 16`` ran HiGHS alone and exited 0; the library's ``compare(st, ["highs"], ks=[16])`` did the same.

The command line passes the options typed on it (``copter_cli.cmd_compare``); the library passes its parameters
that differ from their defaults (:func:`given_parameters`). Both get this module's message, which names the
command-line flags.

``--ray-address`` beside a POP baseline whose parts do not run on Ray (``--executor process|inline``,
``--pop-workers 0``) is refused the same way (:func:`ray_address_off_ray`), as ``step --ray-address`` off Ray is
(:mod:`solver.rounds.unread_options`); with no ``--executor`` the state's executor decides, once the state is
read (:func:`solver.rounds.comparison.pop_executor_of`, with this module's message).
"""

from __future__ import annotations

from solver.model.errors import UsageError

POP_ONLY = {"ks": "--k", "seed": "--seed", "pop_client_regex": "--pop-client-regex",
            "pop_shared_rows_regex": "--pop-shared-rows-regex", "pop_workers": "--pop-workers",
            "pop_executor": "--executor", "ray_address": "--ray-address", "pop_scaling": "--pop-scaling"}
"""compare's parameters that only POP rows read (:func:`solver.rounds.compare`'s name -> the CLI's flag)."""

CHECKED = (*POP_ONLY, "highs_solver", "threads")
"""Every parameter :func:`ignored_options` checks."""

DEFAULTS = {"highs_solver": "choose", "pop_scaling": "auto"}
"""The checked parameters whose default is not None (:func:`solver.rounds.compare`'s signature)."""


def given_parameters(**values) -> set[str]:
    """The names among ``values`` (checked parameters of :func:`solver.rounds.compare`, by name) whose value is
    not the default: None, or :data:`DEFAULTS`' entry. Shapes: ``values`` maps name -> value; returns a set."""
    return {name for name, v in values.items() if v is not None and v != DEFAULTS.get(name)}


def ray_address_off_ray(source: str, also: str = "") -> str:
    """The usage error's text for a ``--ray-address`` that POP's parts would not read: they run on ``source``
    (``"--executor process"``, ``"this process (--pop-workers 0)"``, the state's executor); ``also``: what the
    way to use it needs besides ``--executor ray``."""
    return (f"--ray-address applies to --executor ray only, and this compare's POP parts run on {source}, which "
            f"would ignore it; give --executor ray with it{also} to run them on that cluster, or leave it out")


def ignored_options(given: set[str], baselines: list[str], executor: str | None = None,
                    pop_workers: int | None = None) -> str | None:
    """The usage error's text when a parameter in ``given`` (names of :data:`CHECKED`) is read by none of
    ``baselines``, else None: the POP options need ``pop`` or a ``pop-K``, ``ks`` (``--k``) needs ``pop`` itself
    (``pop-K`` fixes its part count), ``highs_solver`` needs ``highs`` or a POP row (``highs-simplex``,
    ``-ipm``, ``-pdlp`` and ``highs-warm`` fix their solver), ``threads`` a HiGHS row (POP's parts run one
    thread each). The text names the command-line flags. Then ``ray_address`` needs POP's parts on Ray:
    ``executor`` (the ``pop_executor`` value) ``process`` or ``inline``, or none with ``pop_workers`` 0, is
    :func:`ray_address_off_ray`'s text (an unknown executor is left to its own check, none otherwise to the
    state's executor)."""
    names = set(baselines)
    pop = any(b == "pop" or b.startswith("pop-") for b in names)
    why: dict[str, str] = {}  # flag -> what it needs
    for name, flag in POP_ONLY.items():
        if name in given and not pop:
            why[flag] = "--baseline pop" if name == "ks" else "--baseline pop (or pop-K)"
    if "ks" in given and pop and "pop" not in names:
        why["--k"] = "--baseline pop (a pop-K baseline fixes its own K)"
    if "highs_solver" in given and not (pop or "highs" in names):
        why["--highs-solver"] = ("--baseline highs or pop (highs-simplex, highs-ipm, highs-pdlp and highs-warm fix "
                                 "their solver)")
    if "threads" in given and not any(b.startswith("highs") for b in names):
        why["--threads"] = "a highs baseline (POP's parts run one HiGHS thread each)"
    if not why:
        if "ray_address" not in given or not pop:
            return None
        if executor in ("process", "inline"):
            return ray_address_off_ray(f"--executor {executor}")
        if executor is None and pop_workers == 0:  # --executor ray beside it: pop_executor_of's contradiction
            return ray_address_off_ray("this process (--pop-workers 0)", " (and no --pop-workers 0)")
        return None
    chosen = " ".join(f"--baseline {b}" for b in dict.fromkeys(baselines)) or "no --baseline"
    needs = "; ".join(f"{flag} needs {need}" for flag, need in why.items())
    one = len(why) == 1
    return (f"{', '.join(why)} appl{'ies' if one else 'y'} to none of this compare's baselines ({chosen}): "
            f"{needs}; add such a baseline, or leave {'it' if one else 'them'} out")


def refuse_ignored(given: set[str], baselines: list[str], executor: str | None = None,
                   pop_workers: int | None = None, ray_address: str | None = None) -> None:
    """Raise UsageError with :func:`ignored_options`' text when it has one; then for a ``ray_address`` (the
    ``--ray-address`` value, read by a POP row) not of a Ray address's form, before anything runs: it was found
    only when POP's row started, after the rows before it (``-b highs -b pop``) had run.

    Raises:
        UsageError: a parameter in ``given`` that none of ``baselines`` reads, or a ``ray_address`` that POP's
            parts on ``executor`` (or ``pop_workers`` 0) would not read (the CLI: exit 2, nothing run); a
            malformed ``ray_address`` (:func:`solver.partition.executor.ray_address_target`, naming
            ``--ray-address`` and the value).
    """
    message = ignored_options(given, baselines, executor, pop_workers)
    if message:
        raise UsageError(message)
    if ray_address is not None:  # given: a POP baseline reads it (ignored_options refused it otherwise)
        from solver.partition.executor import ray_address_target

        ray_address_target(ray_address)
