"""``python -m nerve`` is the ``nerve`` command."""

from nerve._cli import main

main()
