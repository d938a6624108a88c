"""Crash consistency under load, a short run: kill/restart trials of
crash_harness.py (the benchmark run has 50: bench/durable/README.md). The
seed is printed; DYNABURST_CRASH_SEED repeats a run and
DYNABURST_CRASH_TRIALS sets the number of trials."""

from __future__ import annotations

import os
import random

from crash_harness import run

CI_TRIALS = 5


def test_every_acknowledged_write_survives_a_sigkill_and_no_transaction_is_half_applied(tmp_path):
    seed = int(os.environ.get("DYNABURST_CRASH_SEED") or random.SystemRandom().getrandbits(32))
    trials = int(os.environ.get("DYNABURST_CRASH_TRIALS") or CI_TRIALS)
    print(f"crash harness seed {seed} (DYNABURST_CRASH_SEED={seed} repeats it)")
    summary = run(trials, seed, str(tmp_path))
    assert summary["trials"] == trials
    assert summary["acknowledged_requests"] > 0
    # The kills found several log files each (rotated), and every trial
    # after the first started with spares (recycled by the restart before).
    assert summary["log_files_at_kill"] > 2 * trials
    assert summary["spare_log_files_at_start"] >= trials - 1
