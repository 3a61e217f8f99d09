"""``python -m nerve.operators``: what nerve runs for a node made of operators."""

from nerve.operators import run

run()
