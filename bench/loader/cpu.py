"""Runs a command and prints, on the last line of stderr, the CPU seconds
(user + system) it and its children used and its wall seconds, as JSON:
{"cpu_s": ..., "user_s": ..., "sys_s": ..., "wall_s": ...}. The command's
stdout passes through. Usage: cpu.py CMD [ARGS...]"""

import json
import os
import subprocess
import sys
import time


def main():
    start = time.perf_counter()
    proc = subprocess.Popen(sys.argv[1:])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({"cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime,
                      "sys_s": usage.ru_stime, "wall_s": wall}), file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
