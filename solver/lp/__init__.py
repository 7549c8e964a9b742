"""The LP core: restarted reflected Halpern PDHG (r2HPDHG) with its scaling, restarts, termination,
infeasibility certificates, trivial checks and HiGHS presolve."""
