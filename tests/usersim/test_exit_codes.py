"""`usersim run` exit codes: 1 for any failed or errored conversation, never for a failure the
simulated user caused (simulator-suspect); --fail-under relaxes it."""

from __future__ import annotations

import pytest

from tests.reports.factory import record
from usersim.cli.run import exit_for


def test_failed_or_error_exits_1_and_unjudged_does_not(capsys):
    exit_for([record("A"), record("B", status="unjudged")], None)
    with pytest.raises(SystemExit) as exc:
        exit_for([record("A"), record("B", status="error")], None)
    assert exc.value.code == 1
    assert "1 of 2 conversation(s) failed or errored" in capsys.readouterr().err


def test_simulator_suspect_failure_is_left_out_and_named(capsys):
    suspect = record("C", status="failed").model_copy(update={"simulator_suspect": True})
    exit_for([record("A"), suspect], None)  # no SystemExit: the agent is not charged
    err = capsys.readouterr().err
    assert "1 failed conversation(s) left out as simulator-suspect" in err and suspect.id in err
    with pytest.raises(SystemExit):
        exit_for([record("A"), suspect, record("D", status="failed")], None)


def test_fail_under_counts_judged_conversations_only(capsys):
    recs = [record("A"), record("B"), record("C", status="failed"), record("D", status="unjudged")]
    exit_for(recs, 0.6)  # 2/3 judged passed
    assert "pass rate 2/3 = 67% >= --fail-under 60%" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        exit_for(recs, 70)
