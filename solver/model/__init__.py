"""The nouns every part of copter shares: Problem, Delta, SolverState, SolveResult, Status, Settings
and the typed errors."""
