"""Concurrent clients: atomic counters, conditional races, serializable transactions."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError

from conftest import THROTTLE_CODES, batch_put, retry_throttled

KEY = {"pk": {"S": "counter"}}


@pytest.mark.parametrize(
    "initial, expr, threads, per_thread",
    [
        pytest.param(None, "ADD n :one", 16, 25, id="ADD-on-missing-item"),
        pytest.param({"N": "0"}, "SET n = n + :one", 12, 20, id="SET-arithmetic"),
    ],
)
def test_concurrent_counter_is_exact(ddb, table, initial, expr, threads, per_thread):
    if initial is not None:
        ddb.put_item(TableName=table, Item={**KEY, "n": initial})

    def work(_):
        for _ in range(per_thread):
            retry_throttled(
                lambda: ddb.update_item(
                    TableName=table, Key=KEY, UpdateExpression=expr, ExpressionAttributeValues={":one": {"N": "1"}}
                )
            )

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))
    item = ddb.get_item(TableName=table, Key=KEY, ConsistentRead=True)["Item"]
    assert item["n"] == {"N": str(threads * per_thread)}


def test_concurrent_conditional_create_has_one_winner(ddb, table):
    threads = 24
    barrier = threading.Barrier(threads)

    def work(i):
        barrier.wait()
        try:
            ddb.put_item(
                TableName=table,
                Item={"pk": {"S": "race"}, "owner": {"N": str(i)}},
                ConditionExpression="attribute_not_exists(pk)",
            )
            return i
        except ClientError as err:
            assert err.response["Error"]["Code"] == "ConditionalCheckFailedException", err.response["Error"]
            return None

    with ThreadPoolExecutor(threads) as pool:
        winners = [r for r in pool.map(work, range(threads)) if r is not None]
    assert len(winners) == 1
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "race"}}, ConsistentRead=True)["Item"]
    assert item["owner"] == {"N": str(winners[0])}


def test_concurrent_optimistic_locking(ddb, table):
    """Version-checked read-modify-write: every successful write is counted exactly once."""
    ddb.put_item(TableName=table, Item={"pk": {"S": "v"}, "version": {"N": "0"}, "total": {"N": "0"}})
    successes = []
    lock = threading.Lock()

    def work(_):
        done = 0
        while done < 10:
            item = retry_throttled(lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "v"}}, ConsistentRead=True))["Item"]
            version = int(item["version"]["N"])
            try:
                ddb.update_item(
                    TableName=table,
                    Key={"pk": {"S": "v"}},
                    UpdateExpression="SET version = :new, #t = #t + :one",
                    ConditionExpression="version = :old",
                    ExpressionAttributeNames={"#t": "total"},
                    ExpressionAttributeValues={":new": {"N": str(version + 1)}, ":old": {"N": str(version)}, ":one": {"N": "1"}},
                )
                done += 1
            except ClientError as err:
                if err.response["Error"]["Code"] in THROTTLE_CODES:
                    continue
                assert err.response["Error"]["Code"] == "ConditionalCheckFailedException", err.response["Error"]
        with lock:
            successes.append(done)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "v"}}, ConsistentRead=True)["Item"]
    assert item["total"] == {"N": "80"}
    assert item["version"] == {"N": "80"}


ACCOUNTS = [f"acct-{i}" for i in range(4)]
START = 1000
MAX_TRANSFER_ATTEMPTS = 2000


def test_concurrent_transfers_keep_sum_and_readers_see_no_partial_state(ddb, table):
    for a in ACCOUNTS:
        ddb.put_item(TableName=table, Item={"pk": {"S": a}, "bal": {"N": str(START)}})
    total = START * len(ACCOUNTS)
    applied = []  # (src, dst, amount) of every transfer that committed
    applied_lock = threading.Lock()
    stop = threading.Event()
    bad_reads = []
    reader_errors = []
    good_reads = [0]

    def transfer_worker(seed):
        rng = random.Random(seed)
        for _ in range(40):
            src, dst = rng.sample(ACCOUNTS, 2)
            amt = rng.randint(1, 300)
            # Bounded: a transfer that keeps conflicting fails the test.
            for _attempt in range(MAX_TRANSFER_ATTEMPTS):
                try:
                    ddb.transact_write_items(
                        TransactItems=[
                            {
                                "Update": {
                                    "TableName": table,
                                    "Key": {"pk": {"S": src}},
                                    "UpdateExpression": "SET bal = bal - :a",
                                    "ConditionExpression": "bal >= :a",
                                    "ExpressionAttributeValues": {":a": {"N": str(amt)}},
                                }
                            },
                            {
                                "Update": {
                                    "TableName": table,
                                    "Key": {"pk": {"S": dst}},
                                    "UpdateExpression": "SET bal = bal + :a",
                                    "ExpressionAttributeValues": {":a": {"N": str(amt)}},
                                }
                            },
                        ]
                    )
                    with applied_lock:
                        applied.append((src, dst, amt))
                    break
                except ClientError as err:
                    code = err.response["Error"]["Code"]
                    if code in THROTTLE_CODES or code == "TransactionConflictException":
                        time.sleep(0.01)
                        continue
                    assert code == "TransactionCanceledException", err.response["Error"]
                    reasons = [r["Code"] for r in err.response["CancellationReasons"]]
                    retryable = {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
                    assert set(reasons) <= {"None", "ConditionalCheckFailed"} | retryable, reasons
                    if "ConditionalCheckFailed" not in reasons:
                        time.sleep(0.01)
                        continue  # retry a conflict or throttling
                    assert reasons[0] == "ConditionalCheckFailed", reasons
                    break  # insufficient funds: not applied
            else:
                raise AssertionError(f"transfer {src}->{dst} still conflicting after {MAX_TRANSFER_ATTEMPTS} attempts")

    def reader():
        while not stop.is_set():
            try:
                resp = ddb.transact_get_items(
                    TransactItems=[{"Get": {"TableName": table, "Key": {"pk": {"S": a}}}} for a in ACCOUNTS]
                )
            except ClientError as err:
                # A read colliding with an in-flight write may be cancelled (reference C6);
                # throttling is also a legitimate answer under load.
                if err.response["Error"]["Code"] not in ("TransactionCanceledException",) + THROTTLE_CODES:
                    reader_errors.append(err.response["Error"])
                time.sleep(0.01)
                continue
            except Exception as exc:  # noqa: BLE001 - surfaced below
                reader_errors.append(repr(exc))
                continue
            balances = [int(r["Item"]["bal"]["N"]) for r in resp["Responses"]]
            if sum(balances) != total or min(balances) < 0:
                bad_reads.append(balances)
            good_reads[0] += 1
            time.sleep(0.002)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for r in readers:
        r.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(transfer_worker, range(8)))
    finally:
        stop.set()
        for r in readers:
            r.join(timeout=30)

    assert reader_errors == [], reader_errors[:5]
    assert bad_reads == [], f"readers saw half-applied transactions: {bad_reads[:5]}"
    assert good_reads[0] > 0
    assert len(applied) > 0

    expected = {a: START for a in ACCOUNTS}
    for src, dst, amt in applied:
        expected[src] -= amt
        expected[dst] += amt
    final = {}
    for a in ACCOUNTS:
        final[a] = int(ddb.get_item(TableName=table, Key={"pk": {"S": a}}, ConsistentRead=True)["Item"]["bal"]["N"])
    assert sum(final.values()) == total
    assert final == expected
    assert min(final.values()) >= 0


def test_concurrent_batch_writes_all_land(ddb, table):
    def work(t):
        for b in range(4):
            batch_put(ddb, table, [{"pk": {"S": f"t{t}-b{b}-{i}"}} for i in range(25)])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    count, kwargs = 0, {}
    while True:
        resp = ddb.scan(TableName=table, Select="COUNT", **kwargs)
        count += resp["Count"]
        if "LastEvaluatedKey" not in resp:
            break
        kwargs = {"ExclusiveStartKey": resp["LastEvaluatedKey"]}
    assert count == 8 * 4 * 25
