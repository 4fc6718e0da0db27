"""Kernel machines: KOMD, EasyMKL, the stair-step classifier, server-side and multi-task solvers."""

__all__: list[str] = []
