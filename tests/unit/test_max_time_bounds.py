"""--max-time bounds what runs after the reduction: verification's limit, blame and localization
are not started once it has run out (minifier.emit.repro_folders, minifier.reduce.budget)."""
import time

from minifier.emit.repro_folders import verify_timeout
from minifier.reduce.budget import Budget


def test_a_verification_may_run_past_max_time_by_the_grace_only():
    assert verify_timeout(float("inf")) == 600  # no --max-time: the usual limit
    assert verify_timeout(1000.0) == 600
    assert verify_timeout(100.0) == 160  # what is left, and the grace
    assert verify_timeout(-30.0) == 60  # already out of time: the grace alone


def test_the_budget_says_when_max_time_has_run_out():
    assert not Budget().out_of_time()
    assert not Budget(deadline=time.monotonic() + 60).out_of_time()
    assert Budget(deadline=time.monotonic() - 1).out_of_time()
