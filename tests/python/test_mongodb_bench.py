"""`dynaburst bench doc-size --target mongodb://...` at reduced size against
the session's FerretDB: seed 001's table for every document size and writer
count, and the client's peak memory flat from 100,000 to 1,000,000 documents
(seed 001's client passed 400 GB at 3.2 million).
"""

from __future__ import annotations

import json
import subprocess

from conftest import server_binary

MiB = 1024 * 1024


def test_bench_doc_size_against_mongodb_reports_every_cell_and_flat_client_memory(mongo_uri, tmp_path):
    out = tmp_path / "bench"
    proc = subprocess.run(
        [server_binary(), "bench", "doc-size", "--target", mongo_uri, "--items", "200",
         "--memory-docs", "100000,1000000", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["failures"] == []
    doc = results["scenarios"]["doc-size"]
    assert doc["seed_id"] == "001"
    assert doc["measured"] is True
    assert doc["server"].startswith("FerretDB")
    cells = {(r["fields"], r["writers"]): r for r in doc["rows"]}
    assert set(cells) == {(f, w) for f in (1, 10, 100) for w in (1, 2, 4, 8, 16)}
    for (fields, writers), r in cells.items():
        # --items 200 is scale 0.02: 100 documents per writer, raised to the
        # 200 minimum.
        assert r["docs"] == 200 * writers, r
        assert r["docs_per_ms"] > 0, r
        assert r["bytes_per_s"] > 0, r
        assert 0 < r["peak_memory_bytes"] < 400 * MiB, r
    # Seed 001's published figures sit beside ours where it measured them.
    assert cells[(1, 1)]["seed"] == {"docs_per_ms": 36.0, "mb_per_s": 1.44}
    assert cells[(100, 16)]["seed"] == {"docs_per_ms": 28.9, "mb_per_s": 98.2}
    assert cells[(10, 2)]["seed"] is None

    memory = {m["docs"]: m for m in doc["memory"]}
    assert set(memory) == {100_000, 1_000_000}
    small, large = memory[100_000]["peak_memory_bytes"], memory[1_000_000]["peak_memory_bytes"]
    # Flat: ten times the documents may not cost 20% more memory, beyond
    # 16 MiB of allocator slack (a peak near 70 MB moves by ~10 MB from run
    # to run). Memory that grew with the documents would be ~10x.
    assert large <= max(small * 1.2, small + 16 * MiB), (small, large)
    assert large < 200 * MiB, large

    report = (out / "report.md").read_text()
    assert "Client memory by document count" in report
    assert "| 1,000,000 | 1 | 4 |" in report
    assert (out / "doc-size.svg").read_text().startswith("<svg")
