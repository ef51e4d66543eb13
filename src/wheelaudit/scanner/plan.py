"""Planning: the members of a wheel as batches for the workers."""

from __future__ import annotations

from collections.abc import Sequence

from wheelaudit.archive import Member

#: a member at least this large is a batch of its own
BIG = 4 << 20
#: small members are batched up to about this many bytes or BATCH_COUNT members
BATCH_BYTES = 4 << 20
BATCH_COUNT = 256


def plan(members: Sequence[Member]) -> list[list[int]]:
    """Batches of member indices, largest first: each big member alone (the largest starts first:
    it is the critical path), then small neighbours in file order together."""
    big = sorted((i for i, m in enumerate(members) if m.size >= BIG), key=lambda i: -members[i].size)
    small = sorted((i for i, m in enumerate(members) if m.size < BIG), key=lambda i: (members[i].offset, i))
    batches: list[list[int]] = [[i] for i in big]
    cur: list[int] = []
    weight = 0
    for i in small:
        cur.append(i)
        weight += members[i].size + 4096
        if weight >= BATCH_BYTES or len(cur) >= BATCH_COUNT:
            batches.append(cur)
            cur, weight = [], 0
    if cur:
        batches.append(cur)
    return batches
