"""What the camera draws and the sink expects: a bright square moving along the image."""

HEIGHT, WIDTH, SIDE = 480, 640, 40


def square_at(frame: int) -> tuple[int, int]:
    """The square's top-left corner (x, y) in frame number ``frame``."""
    return (frame * 8) % (WIDTH - SIDE), (frame * 5) % (HEIGHT - SIDE)
