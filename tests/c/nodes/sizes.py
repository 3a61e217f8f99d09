"""The sizes and checksum of the size tests, as checksum.h has them."""

import numpy as np

SIZES = [8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 67108864]


def content(size: int, seed: int) -> np.ndarray:
    """`size` pseudo-random bytes."""
    return np.random.default_rng(seed).integers(0, 2**63, size // 8, dtype=np.uint64).view(np.uint8)


def checksum(data: np.ndarray) -> str:
    """checksum.h's position-weighted sum of the 64-bit words of `data`, as 16 hex digits."""
    w = data.view("<u8")
    weights = 2 * np.arange(len(w), dtype=np.uint64) + np.uint64(1)
    return f"{int(np.sum(w * weights, dtype=np.uint64)):016x}"
