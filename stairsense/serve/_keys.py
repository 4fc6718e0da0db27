"""Input keys as a user sees them: opaque, and each user's own.

Why: the learner numbers the distinct inputs of *all* users in arrival order (spec dinuzzo §3.4,
the ids ``h^j`` into X̌), and a row that another user already sent gets that row's id.  Handed out
as is, a key told a user that someone else had sent the same row, and how many distinct rows the
server holds.  So the server shows each user a keyed pseudo-random permutation of the ids
(:class:`KeyCipher`), different for every user: the same row gets unrelated keys for two users,
and a key says nothing about how many rows exist.  The operation log keeps the learner's ids
(replay needs them); only what crosses the API is translated.

The permutation is a 4-round Feistel network (Luby–Rackoff: a pseudo-random permutation when
its round functions are pseudo-random) over 52 bits, so keys stay integers that every JSON
client reads exactly (below 2**53); the round function is keyed BLAKE2b of (user, round, half).
"""
from __future__ import annotations

import hashlib

__all__ = ["KeyCipher", "KEY_BITS"]

KEY_BITS = 52
_HALF = KEY_BITS // 2
_MASK = (1 << _HALF) - 1
_ROUNDS = 4


class KeyCipher:
    """A bijection of ``[0, 2**52)`` per user, fixed by ``secret`` (the store keeps it).

    >>> cipher = KeyCipher(bytes(32))
    >>> key = cipher.public(user=7, key=3)
    >>> cipher.private(7, key), cipher.public(8, 3) != key
    (3, True)
    """

    def __init__(self, secret: bytes):
        self.secret = secret

    def _round(self, user: int, step: int, half: int) -> int:
        data = user.to_bytes(8, "little", signed=True) + bytes([step]) + half.to_bytes(4, "little")
        return int.from_bytes(hashlib.blake2b(data, key=self.secret, digest_size=4).digest(), "little") & _MASK

    def public(self, user: int, key: int) -> int:
        """The key ``user`` sees for the learner's input id ``key``."""
        left, right = key >> _HALF, key & _MASK
        for step in range(_ROUNDS):
            left, right = right, left ^ self._round(user, step, right)
        return (left << _HALF) | right

    def private(self, user: int, key: int) -> int | None:
        """The learner's input id behind ``user``'s key ``key``; None if no id can have it."""
        if not 0 <= key < 1 << KEY_BITS:
            return None
        left, right = key >> _HALF, key & _MASK
        for step in reversed(range(_ROUNDS)):
            left, right = right ^ self._round(user, step, left), left
        return (left << _HALF) | right
