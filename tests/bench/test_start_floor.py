"""The dependency floor the bench sets beside `usersim validate` (bench/part_start.py `_FLOOR`): it
must cost no more than validate itself has to pay, so it may load only modules that validate loads
too, and it must load the ones the floor is said to stand for. Nothing is timed."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.part_start import _FLOOR, BANK

_PRINT_MODULES = "import json, sys; print(json.dumps(sorted(sys.modules)))\n"


def _modules(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_floor_loads_nothing_validate_does_not_load():
    validate = (
        "import sys\n"
        f"sys.argv = ['usersim', 'validate', {str(BANK)!r}]\n"
        "from usersim.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
    )
    floor = _modules(_FLOOR + _PRINT_MODULES)
    validated = _modules(validate + _PRINT_MODULES)
    assert {"click", "yaml", "pydantic", "pydantic._internal._generate_schema"} <= floor
    assert floor - validated == set(), "the floor loads what validate never needs"
    assert not any(m == "usersim" or m.startswith("usersim.") for m in floor)
