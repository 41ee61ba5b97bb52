"""The judge's in-process channel: where the grader replays our own catalogued answers."""

import torch

from autograder import wire
from autograder.judge import InProcessChannel


def test_an_answer_replayed_in_the_grader_cannot_switch_autograd_off_for_the_next_check():
    # The misconception matcher replays catalogued mistakes in the grader's own process; one
    # that leaves torch.set_grad_enabled(False) behind made the next submission's reference
    # (09's fine_tune) fail with "does not require grad".
    def halve_and_switch_off(x, limit):
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)
        return x / 2

    case = wire.encode({"x": torch.tensor([4.0]), "limit": 3.0, "kind": "leaf"})
    channel = InProcessChannel({"halve_until_small": halve_and_switch_off})
    channel.run("autograder.probes.welcome", "probe_halve_until_small", "halve_until_small", case)
    assert torch.is_grad_enabled()
    assert torch.get_default_dtype() == torch.float32


def test_a_mistakes_visible_tests_replayed_in_the_grader_leave_its_modes_alone():
    # The matcher also runs the visible tests of each candidate mistake here (so a hint never
    # contradicts the error the learner saw): they call the mistake directly, not through a probe.
    from autograder.misconceptions import visible_ending

    def switch_off():
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)

    ending = visible_ending("switch_off()\nassert False, 'caught'", {"switch_off": switch_off})
    assert ending == "AssertionError: caught"
    assert torch.is_grad_enabled()
    assert torch.get_default_dtype() == torch.float32


def test_the_kernel_gets_every_module_its_probes_import():
    """A sandboxed kernel cannot read autograder/: it gets the probes' sources, and each
    ``from autograder... import`` among them must be one of those it gets."""
    import re

    from autograder import course, judge

    imported = re.compile(r"^\s*from (autograder[\w.]*) import (\w+)", re.M)
    for lesson in course.lessons():  # one lesson's kernel at a time, as in grading
        modules = judge.kernel_modules({course.topic(lesson)}, "")
        _check_closed(modules, imported, course.ROOT)


def _check_closed(modules: dict, imported, root) -> None:
    for name, source in modules.items():
        for package, what in imported.findall(source):
            submodule = f"{package}.{what}"
            is_module = (root / (submodule.replace(".", "/") + ".py")).is_file()
            needed = submodule if is_module else package
            assert needed in modules, f"{name} imports {submodule}, which is not sent"
