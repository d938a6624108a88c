"""Photographs the web view during a seed-004-style load (scripts/web-screenshot)."""

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import ServerProcess, make_client  # noqa: E402
from test_web import WINDOW, browser, create_on_demand  # noqa: E402

HOT_ITEMS = 40_000  # one key levels at 1,000 WCU/s: about 40 s
SHUFFLED_ITEMS = 140_000  # 256 keys over 4 partitions: about 40 s


def write_jsonl(path, items):
    with open(path, "w") as f:
        for pk, sk in items:
            f.write(json.dumps({"pk": pk, "sk": sk, "cidr": f"{pk}.{sk % 256}.0.0/16"}) + "\n")


def load(binary, url, table, path):
    subprocess.run(
        [binary, "load", str(path), "--table", table, "--endpoint-url", url, "--region", "us-east-1"],
        check=True,
        env={**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"},
    )


def main(binary, out):
    os.environ["DYNABURST_BIN"] = binary
    srv = ServerProcess()
    try:
        ddb = make_client(srv.url)
        table = "ipranges"
        create_on_demand(ddb, table, "N")
        rng = random.Random(4)
        with tempfile.TemporaryDirectory() as tmp:
            hot = Path(tmp) / "hot.jsonl"
            shuffled = Path(tmp) / "shuffled.jsonl"
            write_jsonl(hot, [(10, i) for i in range(HOT_ITEMS)])
            items = [(i % 256, 1_000_000 + i) for i in range(SHUFFLED_ITEMS)]
            rng.shuffle(items)
            write_jsonl(shuffled, items)
            driver = browser()
            try:
                driver.get(srv.url + "/")
                load(binary, srv.url, table, hot)
                time.sleep(5)
                load(binary, srv.url, table, shuffled)
                time.sleep(3)
                height = driver.execute_script("return document.body.scrollHeight")
                driver.set_window_size(WINDOW[0], max(WINDOW[1], height))
                time.sleep(1.5)
                driver.save_screenshot(out)
            finally:
                driver.quit()
    finally:
        srv.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
