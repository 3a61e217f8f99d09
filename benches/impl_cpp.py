"""nerve's C++ nodes (nerve.hpp; benches/cpp-node) against its Rust and Python nodes: the `cpp`
scenario, nerve only.

A case of the scenario names the language it compares C++ with (`Case.lang`): `rust` cases are
run by C++ → C++ and by Rust → Rust, `python` cases by C++ → Python and Python → C++ and by
Python → Python. The runs of one case are implementations of it that take turns, as every
implementation of a case does, so the difference between two rows is not a slow minute of the
machine's. Each is impl_nerve's dataflow with the case's language set to the ends it runs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from benches import impl_nerve
from benches.model import Case, Samples


class Ends:
    """nerve with a producer and a consumer in `lang` (`cpp-python`: C++ sends, Python reads),
    in the cases that compare with `against`."""

    def __init__(self, lang: str, against: str) -> None:
        self.lang, self.against = lang, against

    def supports(self, case: Case) -> bool:
        return case.scenario == "cpp" and case.lang == self.against

    def run(self, case: Case, workdir: Path) -> Samples:
        return impl_nerve.run(replace(case, lang=self.lang), workdir)


IMPLEMENTATIONS = (
    Ends("cpp", "rust"),
    Ends("rust", "rust"),
    Ends("cpp-python", "python"),
    Ends("python-cpp", "python"),
    Ends("python", "python"),
)
