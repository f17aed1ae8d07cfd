"""usersim reports: summary.json (every metric, typed) and one self-contained report.html.

- `reports.summary.build_summary(records, meta, *, run_dir=None) -> dict` — summary.json content
- `reports.html.write_report(path, records, summary) -> Path` — report.html
- `reports.cli.rebuild(run_dir)` / `usersim report RUN_DIR` — both again from results.jsonl
"""
