"""The 79 window features of Table 12.1 and their [-1, 1] scaling."""

__all__: list[str] = []
