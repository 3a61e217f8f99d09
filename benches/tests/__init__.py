"""The benchmark suite's own tests: its statistics, report and harness (run by CI with the
project's tests; the project's tests in tests/ run the suite only as a command)."""
