#!/usr/bin/env python3
"""Prints a Markdown table of AFL++ runs from their fuzzer_stats files:
fuzz/results/summarize.py [OUT_DIR] (default fuzz/out), one row per
target directory OUT_DIR/TARGET/default."""

import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "out")
rows, total = [], 0
for target in sorted(os.listdir(out)):
    path = os.path.join(out, target, "default", "fuzzer_stats")
    if not os.path.exists(path):
        continue
    stats = {}
    for line in open(path):
        key, _, value = line.partition(":")
        stats[key.strip()] = value.strip()
    execs = int(stats["execs_done"])
    total += execs
    hours = int(stats["run_time"]) / 3600
    rows.append(f"| {target} | {execs:,} | {stats['saved_crashes']} | {stats['saved_hangs']} | "
                f"{stats['corpus_count']} | {stats['bitmap_cvg']} | {stats['cycles_done']} | {hours:.2f} h |")
print("| target | executions | crashes | hangs | queue | map coverage | cycles | fuzzing time |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
print("\n".join(rows))
print(f"| all | {total:,} | | | | | | |")
