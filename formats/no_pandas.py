"""Keep pandas out of a process that never uses it: pyarrow's pandas shim imports pandas, whenever it is
installed, on the process's first conversion of a Python list, a NumPy object array or a string array
(``pa.array``, ``Array.to_numpy``), 0.3-1 s (measured with ``python -X importtime``).

Used by the CLI's process (``copter_cli.entry``), ``copter worker start``'s server and the part workers'
forkserver (``solver.partition.forkserver_warm``): a part worker turns the names a part was shipped with from
Arrow strings back into an object array (``solver.partition.shipping``), and each new worker imported pandas for
it (a TE Kdl round, 2 workers: 0.27 s a worker before its first part). A library user's process is left alone."""

from __future__ import annotations

import sys


class _NoPandas:
    """A meta-path finder that refuses ``import pandas`` (see :func:`keep_pandas_out`)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("pandas is kept out of this copter process", name=name)
        return None


def keep_pandas_out() -> None:
    """Make pandas unimportable in this process, unless it is imported already. A finder that raises
    ModuleNotFoundError is what pyarrow's shim treats as "pandas not installed" (a ``None`` entry in
    ``sys.modules`` is not: the shim then reads ``None.__version__``)."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())
