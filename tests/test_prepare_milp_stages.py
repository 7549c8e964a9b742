"""``copter prepare`` still reaches the MILP relaxation stages' kernels although its tiny warm-up MILPs would go to
HiGHS first (``Settings.integer_highs_max_nonzeros``): without the stages in the warm-up, rounding, repair, fill
and the choice-row bound kernels were left to compile inside the first larger MILP round of a fresh install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STAGE_KERNELS = {"solver.integer.kernels.decide_pass", "solver.integer.kernels.repair_pass",
                 "solver.integer.kernels.fill_pass", "solver.integer.kernels.swap_pass",
                 "solver.integer.kernels.init_activity", "solver.integer.lagrangian_kernel.choice_inner"}

SCRIPT = r'''
import json
from solver.prepare import kernels, prepare

prepare()
print(json.dumps(sorted(name for name, d in kernels().items() if d.signatures)))
'''


def test_prepare_warms_up_the_milp_stage_kernels():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    reached = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert STAGE_KERNELS <= reached, sorted(STAGE_KERNELS - reached)
