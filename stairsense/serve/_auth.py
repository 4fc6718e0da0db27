"""Per-user bearer tokens: random, stored only as hashes, compared in constant time.

A token reads ``ss1.<user name>.<secret>`` with a 256-bit random secret.  The name tells the server
which stored hash to compare against, so the comparison is one ``hmac.compare_digest`` of two
SHA-256 digests and its timing does not depend on how much of a guess was right.  A plain hash
(not a slow password hash) is enough because the secret is random with 256 bits of entropy: there
is no dictionary to attack, and a leaked table of hashes does not reveal tokens.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets

__all__ = ["USER_NAME", "new_token", "token_hash", "token_user_name", "token_matches"]

_PREFIX = "ss1"
USER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # no dots: the name is a field of the token


def new_token(name: str) -> str:
    return f"{_PREFIX}.{name}.{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_user_name(token: str) -> str | None:
    """The user name a token claims, or None if it is not shaped like one of ours."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != _PREFIX or not USER_NAME.fullmatch(parts[1]):
        return None
    return parts[1]


def token_matches(token: str, stored_hash: str) -> bool:
    return hmac.compare_digest(token_hash(token), stored_hash)
