"""The seeded generator both reference scripts draw from."""

import os
import random


def seeded(variable):
    """The seed in the environment variable `variable`, else a fresh random
    one, and a generator from it."""
    text = os.environ.get(variable)
    seed = int(text) if text else random.SystemRandom().randrange(2**32)
    return seed, random.Random(seed)
