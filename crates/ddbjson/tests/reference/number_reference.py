#!/usr/bin/env python3
"""Reference answers for `Number` from Python's `decimal`, for the
differential test `tests/differential.rs`.

Draws random number texts from a seeded generator (DYNABURST_DECIMAL_SEED,
else a fresh random seed; printed first as `seed N`), and prints one case a
line, tab-separated:

    parse  TEXT        EXPECTED
    add    TEXT  TEXT  EXPECTED
    sub    TEXT  TEXT  EXPECTED
    cmp    TEXT  TEXT  -1|0|1

EXPECTED is the canonical plain-notation text of the exact result, or the
errors the result may give, `!` followed by a comma-separated list of
`invalid`, `precision`, `overflow`, `underflow`. The reference is decimal's
arithmetic in DynamoDB's context: 38 digits, exponents from 1E-130 to
9.99...E+125 (Emin=-130, Emax=125); a result that had to be rounded is
`precision`, one past Emax `overflow`, a non-zero one below Emin (subnormal)
`underflow`. Usage: number_reference.py [CASES]
"""

import decimal
import re
import sys

from seeded import seeded

# DynamoDB's context: 38 digits, 1E-130 to 9.99...E+125.
CTX = decimal.Context(prec=38, Emax=125, Emin=-130, rounding=decimal.ROUND_HALF_EVEN, traps=[])
# 38 digits with no exponent bound: rounding here is a precision error alone.
WIDE = decimal.Context(prec=38, Emax=10**6, Emin=-(10**6), rounding=decimal.ROUND_HALF_EVEN, traps=[])
# The grammar DynamoDB's numbers take: sign, digits with an optional point,
# optional exponent.
GRAMMAR = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


def outcome(op):
    """Runs op(context) in both contexts: the canonical text of the result,
    or the errors it gives."""
    errors = []
    WIDE.clear_flags()
    op(WIDE)
    if WIDE.flags[decimal.Inexact]:
        errors.append("precision")
    CTX.clear_flags()
    value = op(CTX)
    if CTX.flags[decimal.Overflow]:
        errors.append("overflow")
    if CTX.flags[decimal.Subnormal] or CTX.flags[decimal.Underflow]:
        errors.append("underflow")
    if errors:
        return "!" + ",".join(errors)
    return canonical(value)


def canonical(value):
    if value.is_zero():
        return "0"
    # Plain notation without trailing zeros: normalize (exact here, the
    # value already fits), then print without an exponent.
    return format(value.normalize(decimal.Context(prec=1000)), "f")


def parse(text):
    if not GRAMMAR.match(text):
        return "!invalid"
    return outcome(lambda ctx: ctx.create_decimal(text))


def exact(text):
    return decimal.Decimal(text)


def random_number(rng):
    """A number text in one of the shapes clients send."""
    shape = rng.random()
    if shape < 0.05:
        return rng.choice(["0", "-0", "+0", "0.000", "00", "1", "-1", ".5", "5.", "0e5", "1E-130", "1E-131",
                           "9.9999999999999999999999999999999999999E+125", "1E+126", "1e125"])
    sign = rng.choice(["", "", "-", "+"])
    ndigits = rng.choice([1, 2, 3, 5, 10, 19, 20, 37, 38, 38, 39, 40]) if shape < 0.9 else rng.randint(1, 45)
    digits = "".join(rng.choice("0123456789") for _ in range(ndigits))
    if rng.random() < 0.3:
        digits = "0" * rng.randint(1, 3) + digits
    if rng.random() < 0.3:
        digits = digits + "0" * rng.randint(1, 40)
    if rng.random() < 0.5:
        point = rng.randint(0, len(digits))
        digits = digits[:point] + "." + digits[point:]
        if digits == ".":
            digits = "0."
    exponent = ""
    if rng.random() < 0.5:
        e = rng.choice([rng.randint(-10, 10), rng.randint(-140, 135)])
        exponent = rng.choice("eE") + (rng.choice(["", "+"]) if e >= 0 else "") + str(e)
    return sign + digits + exponent


def storable(rng):
    """A number text that parses (so arithmetic cases are mostly valid)."""
    for _ in range(100):
        text = random_number(rng)
        if not parse(text).startswith("!"):
            return text
    return "1"


def nearby(rng, text):
    """A second operand close to the first in magnitude, so that sums
    exercise carries, cancellation and the precision edge."""
    d = exact(text)
    if rng.random() < 0.3:
        return format(-d, "f") if not d.is_zero() else "0"
    shift = rng.randint(-40, 5)
    tweak = decimal.Decimal(rng.randint(-9, 9)).scaleb(d.adjusted() + shift) if not d.is_zero() else decimal.Decimal(1)
    return format(decimal.Context(prec=200).add(d, tweak), "E")


def main():
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    seed, rng = seeded("DYNABURST_DECIMAL_SEED")
    out = [f"seed {seed}"]
    for i in range(cases):
        kind = i % 4
        if kind == 0:
            text = random_number(rng)
            if rng.random() < 0.05:
                text = rng.choice(["", "-", "1e", "e5", "1.2.3", "NaN", "Infinity", "1_000", " 1", "0x10", "1e+-5",
                                   "--1", "1,5"])
            out.append(f"parse\t{text}\t{parse(text)}")
            continue
        a = storable(rng)
        b = nearby(rng, a) if rng.random() < 0.5 else storable(rng)
        if parse(b).startswith("!"):
            b = storable(rng)
        if kind == 1:
            out.append(f"add\t{a}\t{b}\t{outcome(lambda ctx: ctx.add(exact(a), exact(b)))}")
        elif kind == 2:
            out.append(f"sub\t{a}\t{b}\t{outcome(lambda ctx: ctx.subtract(exact(a), exact(b)))}")
        else:
            out.append(f"cmp\t{a}\t{b}\t{int(exact(a).compare(exact(b)))}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
