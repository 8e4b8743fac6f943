"""Shard functions the executor tests hand to `current().map` (tests/test_ray.py and
tests/test_workers.py): module-level, so Ray tasks and worker processes can import them."""

from __future__ import annotations

import os
import random
import time


def _pid(_):
    time.sleep(0.2)
    return os.getpid()


def _square(i, plus):
    time.sleep(random.random() * 0.05)  # finished out of order
    return i * i + plus


def _fail_on_4(i):
    from worldforge.errors import RenderError

    if i == 4:
        raise RenderError("shard 4 failed")
    return i
