"""The forkserver's and part workers' ``sys.excepthook`` (solver.partition.forkserver_lifeline) is silent for a
KeyboardInterrupt: a terminal's Ctrl-C reaches the whole process group, and the forkserver, still importing its
preload, printed a 17-37-line traceback before the command's one error line (helper-165). Other errors still
reach the previous hook."""

from __future__ import annotations

from solver.partition.forkserver_lifeline import quiet_when_owner_left


def test_a_keyboard_interrupt_is_not_printed_other_errors_are():
    seen = []

    def hook(*args):
        seen.append(args[0])

    quiet_when_owner_left(KeyboardInterrupt, KeyboardInterrupt(), None, _hook=hook)
    assert seen == []
    quiet_when_owner_left(ValueError, ValueError("x"), None, _hook=hook)
    assert seen == [ValueError]
