"""nerve's benchmark suite: ``python -m benches --help``."""
