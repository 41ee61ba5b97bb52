"""``VISIBLE_EXEMPT`` (issue #30): an exercise may skip the rule that its visible test catches
its first catalogued mistake only with a reason, and only an exercise that exists."""

import importlib

import pytest

from autograder import course
from autograder.mistakes import catalogue


@pytest.mark.parametrize("lesson", course.lessons())
def test_visible_exemptions_name_real_exercises_with_a_reason(lesson):
    topic = course.topic(lesson)
    module = importlib.import_module(f"autograder.mistakes.{topic}")
    exempt = getattr(module, "VISIBLE_EXEMPT", {})
    assert isinstance(exempt, dict), f"VISIBLE_EXEMPT of {topic} is a {type(exempt).__name__}"
    exercises = {ex.grade_id for ex in course.exercises(lesson)}
    for grade_id, why in exempt.items():
        assert grade_id in exercises, f"{topic}: VISIBLE_EXEMPT names {grade_id!r}, no exercise"
        assert grade_id in catalogue(topic), f"{topic}: {grade_id} has no catalogued mistake"
        assert isinstance(why, str) and why.strip(), f"{topic}: {grade_id} is exempt without a why"
