"""Human review round trip through the CLI: queued 人工 criteria, export, label, import."""

from __future__ import annotations

import csv
import sqlite3

from tests.integration.test_cli_run import records, usersim


def test_review_export_label_import_updates_results_store_and_report(tmp_path):
    out = tmp_path / "run"
    # queued for human review, nothing is judged yet: exit 3 unless accepted
    queued_run = usersim(
        "run", "--id", "B1-EI-03", "--out", str(tmp_path / "q"), "--no-progress", check=False
    )
    assert queued_run.returncode == 3 and "nothing was judged" in queued_run.stderr
    usersim("run", "--id", "B1-EI-03", "--out", str(out), "--no-progress", "--allow-unjudged")
    before = records(out)
    queued = [v for r in before for v in r["verdicts"] if v["judge"] == "human"]
    assert queued and all(
        v["verdict"] == "unjudged" and "queued for human review" in v["reason"] for v in queued
    )
    assert all(r["status"] != "passed" for r in before)

    items = tmp_path / "review.csv"
    usersim("judges", "review-export", str(out), "--to", str(items))
    with items.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    human_rows = [r for r in rows if r["judge"] == "human"]
    assert len(human_rows) == len(queued)
    for r in rows:
        r["label"] = "pass" if r["judge"] == "human" else ""
        r["note"] = "无多余反问"
    with items.open("w", encoding="utf-8-sig", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    usersim("judges", "review-import", str(out), str(items))
    after = {r["id"]: r for r in records(out)}
    for rec in after.values():
        human = [v for v in rec["verdicts"] if v["judge"] == "human"]
        assert all(v["verdict"] == "pass" and "无多余反问" in v["reason"] for v in human)
        rules_ok = all(v["verdict"] == "pass" for v in rec["verdicts"] if v["judge"] not in ("human",))
        assert rec["status"] == ("passed" if rules_ok else "failed")
    db = sqlite3.connect(out / "results.sqlite")
    stored = dict(db.execute("SELECT id, status FROM records").fetchall())
    db.close()
    assert stored == {rid: r["status"] for rid, r in after.items()}
    assert "human label: pass" in (out / "report.html").read_text(encoding="utf-8")

    # re-scoring the stored transcripts keeps the imported labels
    usersim("rescore", str(out))
    again = {r["id"]: r for r in records(out)}
    assert {rid: r["status"] for rid, r in again.items()} == {rid: r["status"] for rid, r in after.items()}
