"""copter's in-memory problem (differential representation), proximal-point LP core, integerization
heuristics and baselines.

``solver`` imports nothing from ``formats`` or ``copter_cli`` (docs/DESIGN.md "Layout").
"""
