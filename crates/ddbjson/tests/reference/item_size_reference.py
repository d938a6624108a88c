#!/usr/bin/env python3
"""Reference item sizes and capacity units by the documented rules, for the
differential test `tests/differential.rs`.

Prints `seed N` (DYNABURST_ITEM_SEED, else a fresh random seed), then one
item a line: `SIZE<TAB>WCU<TAB>RCU_STRONG<TAB>RCU_EVENTUAL<TAB>ITEM_JSON`,
first the documented examples, then random items from the seeded generator.
Rules (dynamodb-behaviour.md B1, B2, B4, B5):
- an item is the sum of its attribute names' UTF-8 bytes and value sizes;
- S: UTF-8 bytes; B: raw bytes; BOOL, NULL: 1;
- N: 1 + ceil(digits / 2), +1 when the digit count and the scientific
  exponent are both even, +1 when negative; zero is 1 (leading and trailing
  zeros trimmed);
- SS, NS, BS: the sum of the elements;
- L: 3 + sum(1 + element); M: 3 + sum(1 + name + value);
- write units: ceil(size / 1 KB), at least 1; read units: ceil(size / 4 KB),
  at least 1, halved when eventually consistent.
Usage: item_size_reference.py [ITEMS]
"""

import base64
import decimal
import json
import sys

from seeded import seeded

# The documented examples: (item, size in bytes).
DOCUMENTED = [
    # B1: AWS's example, 23 bytes.
    ({"shirt-color": {"S": "R"}, "shirt-size": {"S": "M"}}, 23),
]


def number_size(text):
    d = decimal.Decimal(text)
    if d.is_zero():
        return 1
    sign, digits, _ = d.normalize(decimal.Context(prec=100)).as_tuple()
    n = len(digits)
    sci = d.adjusted()
    pad = 1 if n % 2 == 0 and sci % 2 == 0 else 0
    return 1 + (n + 1) // 2 + pad + sign


def value_size(v):
    (kind, x), = v.items()
    if kind == "S":
        return len(x.encode("utf-8"))
    if kind == "N":
        return number_size(x)
    if kind == "B":
        return len(base64.b64decode(x))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode("utf-8")) for s in x)
    if kind == "NS":
        return sum(number_size(s) for s in x)
    if kind == "BS":
        return sum(len(base64.b64decode(b)) for b in x)
    if kind == "L":
        return 3 + sum(1 + value_size(e) for e in x)
    if kind == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(e) for k, e in x.items())
    raise ValueError(kind)


def item_size(item):
    return sum(len(k.encode("utf-8")) + value_size(v) for k, v in item.items())


ALPHABET = "abcXYZ09 -_.é€😀\u0000\u07ff"


def text(rng, most=12):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, most)))


def number(rng):
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 38)))
    if rng.random() < 0.3:
        digits = "0" * rng.randint(1, 3) + digits + "0" * rng.randint(0, 5)
    e = rng.randint(-100, 80)
    return rng.choice(["", "-"]) + digits + "E" + str(e - len(digits))


def valid_number(rng):
    for _ in range(100):
        t = number(rng)
        d = decimal.Decimal(t)
        n = len(d.normalize(decimal.Context(prec=100)).as_tuple().digits)
        if d.is_zero() or (n <= 38 and -130 <= d.adjusted() <= 125):
            return t
    return "0"


def blob(rng, most=10):
    return base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randint(1, most)))).decode()


def value(rng, depth):
    kinds = ["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS"] + (["L", "M"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "S":
        return {"S": text(rng)}
    if kind == "N":
        return {"N": valid_number(rng)}
    if kind == "B":
        return {"B": blob(rng)}
    if kind == "BOOL":
        return {"BOOL": rng.random() < 0.5}
    if kind == "NULL":
        return {"NULL": True}
    if kind == "SS":
        return {"SS": sorted({text(rng) or "x" for _ in range(rng.randint(1, 4))})}
    if kind == "NS":
        seen, out = set(), []
        for _ in range(rng.randint(1, 4)):
            t = valid_number(rng)
            if decimal.Decimal(t) not in seen:
                seen.add(decimal.Decimal(t))
                out.append(t)
        return {"NS": out}
    if kind == "BS":
        return {"BS": sorted({blob(rng) for _ in range(rng.randint(1, 4))})}
    if kind == "L":
        return {"L": [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]}
    return {"M": {text(rng, 6): value(rng, depth + 1) for _ in range(rng.randint(0, 4))}}


def units(size):
    wcu = max(1, -(-size // 1024))
    blocks = max(1, -(-size // 4096))
    return wcu, blocks, blocks / 2


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seed, rng = seeded("DYNABURST_ITEM_SEED")
    out = [f"seed {seed}"]
    items = []
    for item, size in DOCUMENTED:
        assert item_size(item) == size, (item, item_size(item), size)
        items.append(item)
    for _ in range(count):
        item = {(text(rng, 8) or "k"): value(rng, 0) for _ in range(rng.randint(1, 8))}
        if rng.random() < 0.1:
            # Large strings, to cross unit boundaries.
            item["big"] = {"S": "x" * rng.randint(900, 9000)}
        items.append(item)
    for item in items:
        size = item_size(item)
        wcu, strong, eventual = units(size)
        out.append(f"{size}\t{wcu}\t{strong}\t{eventual}\t{json.dumps(item, ensure_ascii=True)}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
