"""The live web view in a real browser: headless Chromium (Debian's
chromium and chromium-driver, through selenium) opens `serve`'s page while
boto3 writes a throttled load on one hot partition key, and the test reads
the rendered page: the table is listed, its throttled-writes series is not
zero, and the heat map marks the hot partition (throttled seconds at or
beyond the partition's maximum, all on one partition). A screenshot is
saved under tests/python/artifacts/ (gitignored)."""

import os
import shutil
import subprocess
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ServerProcess, make_client, server_binary, wait_active

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
# A laptop's width.
WINDOW = (1366, 900)
LOAD_SECONDS = 8
WRITERS = 4


def browser():
    driver_path = shutil.which("chromedriver")
    assert driver_path, "chromedriver missing: scripts/test installs chromium and chromium-driver"
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    if shutil.which("chromium"):
        options.binary_location = shutil.which("chromium")
    return webdriver.Chrome(service=Service(driver_path), options=options)


def hot_key_load(url, table, seconds, stop):
    """Batches of 25 items of about 2 KB under one partition key, so one
    partition is asked for well over its 1,000 WCU."""
    ddb = make_client(url, retries={"total_max_attempts": 1, "mode": "standard"})
    pad = "x" * 1900
    n = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set():
        batch = [{"PutRequest": {"Item": {"pk": {"S": "hot"}, "sk": {"S": f"{uuid.uuid4().hex}-{n + i}"}, "pad": {"S": pad}}}} for i in range(25)]
        n += 25
        try:
            ddb.batch_write_item(RequestItems={table: batch})
        except ddb.exceptions.ClientError:
            pass  # a wholly refused batch: throttled, as intended


def create_on_demand(ddb, table, key_type):
    """A new on-demand table keyed pk, sk (both of `key_type`), active."""
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": key_type},
            {"AttributeName": "sk", "AttributeType": key_type},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_active(ddb, table)


@pytest.fixture
def serve():
    srv = ServerProcess()
    yield srv
    assert srv.stop() == 0


def test_the_page_shows_a_throttled_hot_key(serve):
    ddb = make_client(serve.url)
    table = "web-" + uuid.uuid4().hex[:8]
    create_on_demand(ddb, table, "S")

    # GET / without a browser's Accept is still DynamoDB's health answer.
    with urllib.request.urlopen(serve.url + "/") as r:
        assert r.read().startswith(b"healthy: dynamodb")

    driver = browser()
    stop = threading.Event()
    writers = [threading.Thread(target=hot_key_load, args=(serve.url, table, LOAD_SECONDS, stop)) for _ in range(WRITERS)]
    try:
        driver.get(serve.url + "/")
        assert driver.title == "dynaburst: live capacity"
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        # The page polls every second: wait for the load's last seconds.
        time.sleep(2.5)
        card_css = f'section.table-card[data-table="{table}"][data-index=""]'
        WebDriverWait(driver, 15).until(lambda d: d.find_element(By.CSS_SELECTOR, card_css))
        # The page redraws the card every second, so elements found one by
        # one can go stale between two reads: read them all in one script,
        # which runs between two redraws.
        seen = driver.execute_script(
            """
            const card = document.querySelector(arguments[0]);
            const one = (css) => card.querySelector(css);
            const cells = [...card.querySelectorAll(".heat-map rect.heat-cell.throttled")];
            const throttled = one('.throttled-total[data-op="write"]');
            return {
                title: one("h2").innerText.trim(),
                throttledValue: throttled.getAttribute("data-value"),
                throttledText: throttled.innerText.trim(),
                seriesTotal: one('.rate-chart[data-op="write"] path.series-throttled').getAttribute("data-total"),
                hotCells: cells.map((c) => [c.getAttribute("data-partition"), c.getAttribute("data-fraction")]),
                throttleMarks: card.querySelectorAll(".heat-map rect.throttle-mark").length,
                events: one(".throttle-events").innerText.trim(),
                top: one(".top-throttled").innerText.trim(),
                partitions: one(".partition-count b").innerText.trim(),
            };
            """,
            card_css,
        )
        assert seen["title"] == table
        assert float(seen["throttledValue"]) > 0
        assert "items throttled in view" in seen["throttledText"]
        assert float(seen["seriesTotal"]) > 0
        hot_cells = seen["hotCells"]
        assert hot_cells, "no throttled cell in the heat map"
        partitions = {partition for partition, _ in hot_cells}
        assert len(partitions) == 1, partitions
        assert max(float(fraction) for _, fraction in hot_cells) >= 0.9
        assert seen["throttleMarks"] > 0
        assert "TableWriteKeyRangeThroughputExceeded" in seen["events"]
        assert "hot" in seen["top"].split("\n")[2]
        assert seen["partitions"] == "4"

        ARTIFACTS.mkdir(exist_ok=True)
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(WINDOW[0], max(WINDOW[1], height))
        assert driver.save_screenshot(str(ARTIFACTS / "web-hot-key.png"))
    finally:
        stop.set()
        driver.quit()


def test_load_prints_the_web_views_address(serve, tmp_path):
    ddb = make_client(serve.url)
    table = "web-" + uuid.uuid4().hex[:8]
    create_on_demand(ddb, table, "S")
    data = tmp_path / "items.jsonl"
    data.write_text("".join(f'{{"pk": "k{i}", "sk": "s"}}\n' for i in range(10)))
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}
    out = subprocess.run(
        [server_binary(), "load", str(data), "--table", table, "--endpoint-url", serve.url, "--region", "us-east-1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert f"web view: {serve.url}/ " in out.stderr
    assert ddb.describe_table(TableName=table)["Table"]["ItemCount"] == 10
