"""Crash consistency of `dynaburst serve --data-dir` under load.

One trial: start the server on the data directory, create a fresh table,
run mixed load from several writer threads (PutItem, UpdateItem with a
condition, DeleteItem, BatchWriteItem, TransactWriteItems), recording every
acknowledged write; SIGKILL the server at a random moment; restart it on the
same directory and check:

- it starts cleanly, and every table of the earlier trials is still there
  with the items it had;
- every key holds its last acknowledged value (or is absent if that was a
  delete), or else the value of the one request in flight on that key when
  the server died (which may or may not have been applied), and nothing else
  (no half-written item, no unacknowledged value);
- no transaction is half applied: keys written only by transactions hold
  the items of one transaction, all of them or none;
- DescribeTable's ItemCount equals the items a Scan returns.

Each writer owns its keys, and sends one request at a time, so "the last
acknowledged value" of a key is well defined. Random choices come from one
seed, printed, so a failing trial can be rerun (the kill moment is drawn from
it too; thread interleaving is not reproducible).

Run: python crash_harness.py --trials 50 [--seed N] [--data-dir DIR]
(DYNABURST_BIN names the binary). test_crash.py runs a few trials in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from botocore.exceptions import ClientError

from conftest import ServerProcess, make_client

WRITERS = 6
KEYS_PER_WRITER = 40
TXN_GROUPS_PER_WRITER = 4
TXN_GROUP_SIZE = 3
# Load runs this long (drawn uniformly) before the kill.
KILL_AFTER_S = (0.3, 1.5)
ABSENT = None


def item_state(item):
    """What the harness compares: the value attribute (None when absent)."""
    if item is None:
        return ABSENT
    return item["v"]["S"]


@dataclass
class Writer:
    """One thread's keys, what was acknowledged on each, and what is in flight."""

    index: int
    rng: random.Random
    acked: dict = field(default_factory=dict)  # key -> value (None: absent)
    pending: dict = field(default_factory=dict)  # key -> value of the request in flight
    txn_acked: dict = field(default_factory=dict)  # group -> txn id
    txn_pending: dict = field(default_factory=dict)  # group -> txn id in flight
    requests: int = 0
    acknowledged: int = 0
    counter: int = 0

    def key(self, i):
        return f"w{self.index}-k{i}"

    def group_keys(self, g):
        return [f"w{self.index}-g{g}-{j}" for j in range(TXN_GROUP_SIZE)]

    def fresh_value(self):
        self.counter += 1
        return f"w{self.index}-v{self.counter}"


def run_writer(w: Writer, url: str, table: str, stop: threading.Event):
    ddb = make_client(url, connect_timeout=2, read_timeout=10)
    while not stop.is_set():
        op = w.rng.choice(["put", "update", "delete", "batch", "txn"])
        try:
            if op == "put":
                k = w.key(w.rng.randrange(KEYS_PER_WRITER))
                v = w.fresh_value()
                w.pending = {k: v}
                ddb.put_item(TableName=table, Item={"pk": {"S": k}, "v": {"S": v}, "pad": {"S": "x" * 300}})
            elif op == "update":
                k = w.key(w.rng.randrange(KEYS_PER_WRITER))
                v = w.fresh_value()
                expected = w.acked.get(k, ABSENT)
                w.pending = {k: v}
                if expected is ABSENT:
                    cond, values = "attribute_not_exists(pk)", {":v": {"S": v}}
                else:
                    cond, values = "v = :old", {":v": {"S": v}, ":old": {"S": expected}}
                ddb.update_item(
                    TableName=table,
                    Key={"pk": {"S": k}},
                    UpdateExpression="SET v = :v",
                    ConditionExpression=cond,
                    ExpressionAttributeValues=values,
                )
            elif op == "delete":
                k = w.key(w.rng.randrange(KEYS_PER_WRITER))
                w.pending = {k: ABSENT}
                ddb.delete_item(TableName=table, Key={"pk": {"S": k}})
            elif op == "batch":
                keys = w.rng.sample(range(KEYS_PER_WRITER), w.rng.randrange(1, 26))
                w.pending, requests = {}, []
                for i in keys:
                    k = w.key(i)
                    if w.rng.random() < 0.2:
                        w.pending[k] = ABSENT
                        requests.append({"DeleteRequest": {"Key": {"pk": {"S": k}}}})
                    else:
                        v = w.fresh_value()
                        w.pending[k] = v
                        requests.append({"PutRequest": {"Item": {"pk": {"S": k}, "v": {"S": v}}}})
                out = ddb.batch_write_item(RequestItems={table: requests})
                if out.get("UnprocessedItems"):
                    raise AssertionError(f"unprocessed items with the capacity model off: {out['UnprocessedItems']}")
            else:
                g = w.rng.randrange(TXN_GROUPS_PER_WRITER)
                txn = w.fresh_value()
                w.pending = {}
                w.txn_pending = {g: txn}
                ddb.transact_write_items(
                    TransactItems=[
                        {"Put": {"TableName": table, "Item": {"pk": {"S": k}, "v": {"S": txn}}}}
                        for k in w.group_keys(g)
                    ]
                )
        except ClientError as e:
            code = e.response["Error"]["Code"]
            if op == "update" and code == "ConditionalCheckFailedException":
                # The model said the key held `expected`: a refused condition
                # means a lost acknowledged write.
                raise AssertionError(f"writer {w.index}: condition on {w.pending} failed: {e}") from e
            # An error answer: nothing was acknowledged; keep it pending.
            return
        except Exception:
            # The server died mid-request: the write is in flight forever.
            return
        w.requests += 1
        w.acknowledged += 1
        w.acked.update(w.pending)
        w.pending = {}
        w.txn_acked.update(w.txn_pending)
        w.txn_pending = {}


def scan_all(ddb, table):
    items, start = {}, None
    while True:
        kwargs = {"TableName": table, "ConsistentRead": True}
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = ddb.scan(**kwargs)
        for item in page["Items"]:
            items[item["pk"]["S"]] = item
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def check(ddb, table, writers):
    """Every failure found, as text (empty when consistent)."""
    items = scan_all(ddb, table)
    problems = []
    known = set()
    for w in writers:
        for i in range(KEYS_PER_WRITER):
            k = w.key(i)
            known.add(k)
            got = item_state(items.get(k))
            allowed = {w.acked.get(k, ABSENT)}
            if k in w.pending:
                allowed.add(w.pending[k])
            if got not in allowed:
                problems.append(f"{k}: holds {got!r}, acknowledged {w.acked.get(k, ABSENT)!r}, in flight {w.pending.get(k, '-')!r}")
        for g in range(TXN_GROUPS_PER_WRITER):
            keys = w.group_keys(g)
            known.update(keys)
            got = [item_state(items.get(k)) for k in keys]
            allowed = {w.txn_acked.get(g, ABSENT)}
            if g in w.txn_pending:
                allowed.add(w.txn_pending[g])
            if len(set(got)) != 1:
                problems.append(f"transaction half applied on group {keys}: {got}")
            elif got[0] not in allowed:
                problems.append(f"group {keys}: holds {got[0]!r}, allowed {sorted(map(str, allowed))}")
    stray = sorted(set(items) - known)
    if stray:
        problems.append(f"keys never written: {stray[:5]}")
    count = ddb.describe_table(TableName=table)["Table"]["ItemCount"]
    if count != len(items):
        problems.append(f"ItemCount {count} but a scan finds {len(items)} items")
    return problems, len(items)


def create_table(ddb, table):
    ddb.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )


# Log files of 16 KiB (the server's default is 32 MiB): a trial's load
# rotates through several, and each restart retires them into spares that
# the next trial's log files overwrite, so the kills land on recycled files
# (their old life's frames past the new ones) as well as fresh ones.
WAL_ROTATE_BYTES = 16 * 1024
# And a table's writes in one of the applier's commits go into the database
# as sorted tables of their own (fjall's ingestion, no journal) from this
# many bytes on (the default, 32 MiB, only under a bulk load): the kills
# land between an ingestion and the applier's batch too.
INGEST_MIN_BYTES = 2048


def start(data_dir):
    return ServerProcess(
        [
            "--data-dir",
            str(data_dir),
            "--capacity-model",
            "off",
            "--ttl-interval",
            "0",
            "--wal-rotate-bytes",
            str(WAL_ROTATE_BYTES),
            "--ingest-min-bytes",
            str(INGEST_MIN_BYTES),
        ]
    )


def log_files(data_dir) -> tuple[int, int]:
    """(log files, spare log files) in the data directory."""
    names = os.listdir(data_dir)
    return sum(n.startswith("wal-") for n in names), sum(n.startswith("spare-") for n in names)


def run(trials: int, seed: int, data_dir: str, log=print):
    """Runs `trials` kill/restart trials; returns a summary dict. Raises
    AssertionError on the first inconsistency."""
    rng = random.Random(seed)
    log(f"crash harness: seed {seed}, {trials} trials, data in {data_dir}")
    earlier = {}  # table -> item count found after its trial
    summary = {
        "seed": seed,
        "trials": 0,
        "acknowledged_requests": 0,
        "in_flight_at_kill": 0,
        "kill_after_s": [],
        "log_files_at_kill": 0,
        "spare_log_files_at_start": 0,
    }
    for trial in range(trials):
        table = f"crash-{trial:03}"
        spares_at_start = log_files(data_dir)[1] if os.path.isdir(data_dir) else 0
        srv = start(data_dir)
        ddb = make_client(srv.url)
        create_table(ddb, table)
        writers = [Writer(i, random.Random(rng.getrandbits(64))) for i in range(WRITERS)]
        stop = threading.Event()
        threads = [threading.Thread(target=run_writer, args=(w, srv.url, table, stop), daemon=True) for w in writers]
        for t in threads:
            t.start()
        kill_after = rng.uniform(*KILL_AFTER_S)
        time.sleep(kill_after)
        srv.proc.kill()
        srv.proc.wait()
        logs_at_kill = log_files(data_dir)[0]
        stop.set()
        for t in threads:
            t.join(timeout=30)
            assert not t.is_alive(), "a writer did not stop"
        srv = start(data_dir)
        try:
            ddb = make_client(srv.url)
            problems, found = check(ddb, table, writers)
            names = set(ddb.list_tables(Limit=100)["TableNames"])
            for old, count in earlier.items():
                if old not in names:
                    problems.append(f"table {old} of an earlier trial is gone")
                elif ddb.describe_table(TableName=old)["Table"]["ItemCount"] != count:
                    problems.append(f"table {old} of an earlier trial changed")
        finally:
            srv.stop()
        acked = sum(w.acknowledged for w in writers)
        in_flight = sum(1 for w in writers if w.pending or w.txn_pending)
        log(
            f"trial {trial}: killed after {kill_after:.2f} s, {acked} acknowledged requests, "
            f"{in_flight} in flight, {logs_at_kill} log files at the kill ({spares_at_start} spares at the start), "
            f"{found} items after restart: {'ok' if not problems else 'FAILED'}"
        )
        if problems:
            raise AssertionError(f"seed {seed}, trial {trial}:\n" + "\n".join(problems[:20]))
        if acked == 0:
            raise AssertionError(f"seed {seed}, trial {trial}: no request was acknowledged before the kill")
        earlier[table] = found
        summary["trials"] += 1
        summary["acknowledged_requests"] += acked
        summary["in_flight_at_kill"] += in_flight
        summary["kill_after_s"].append(round(kill_after, 3))
        summary["log_files_at_kill"] += logs_at_kill
        summary["spare_log_files_at_start"] += spares_at_start
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--data-dir", default=None, help="default: a fresh temporary directory, removed afterwards")
    parser.add_argument("--json", default=None, help="write the summary here")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="dynaburst-crash-")
    started = time.monotonic()
    try:
        summary = run(args.trials, seed, data_dir)
    finally:
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    summary["seconds"] = round(time.monotonic() - started, 1)
    summary["kill_after_s"] = {"min": min(summary["kill_after_s"]), "max": max(summary["kill_after_s"])}
    print(json.dumps(summary, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
