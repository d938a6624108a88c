"""Writes the accuracy runs' inputs: JSON Lines of 1 KB items (one write
unit each), keyed pk (S) and sk (N), sized so a real load takes well under
a minute. Deterministic: the shuffled orders come from a fixed seed."""

import json
import random
import sys

ITEM_BYTES = 1024


def item(pk, sk):
    # DynamoDB's size: attribute names plus values (a number as about
    # half its digits plus one byte).
    used = len("pk") + len(pk) + len("sk") + (len(str(sk)) + 1) // 2 + 1 + len("pad")
    return {"pk": pk, "sk": sk, "pad": "x" * (ITEM_BYTES - used)}


def write(path, items):
    with open(path, "w") as f:
        for i in items:
            f.write(json.dumps(i, separators=(",", ":")) + "\n")


def main(out):
    rnd = random.Random(4)
    # One partition-key value: levels at 1,000 units/s.
    write(f"{out}/single-key.jsonl", [item("0", i) for i in range(30_000)])
    # ~27 keys of 1,500 in key order.
    write(f"{out}/sorted.jsonl", [item(str(i // 1500 + 1), i) for i in range(40_000)])
    # 200 keys, shuffled.
    shuffled = [item(str(i % 200 + 1), i) for i in range(100_000)]
    rnd.shuffle(shuffled)
    write(f"{out}/shuffled.jsonl", shuffled)
    provisioned = [item(str(i % 200 + 1), i) for i in range(200_000)]
    rnd.shuffle(provisioned)
    write(f"{out}/provisioned.jsonl", provisioned)
    # A 5 WCU table: 300 items over 3 keys.
    write(f"{out}/prov5.jsonl", [item(f"k{i % 3}", i) for i in range(300)])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
