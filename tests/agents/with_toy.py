"""Run a `ways` entry point with the toy agent registered: the one registry line a new
agent adds, made here at run time since the toy lives in the tests.

    python tests/agents/with_toy.py hook sensors --agent toy
    python tests/agents/with_toy.py reconcile --agent toy
"""

import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[2])  # the repository: `tests` imports

from tests.agents import toy  # noqa: E402
from ways_sensors import agents  # noqa: E402

agents.register(toy.FACE)

if sys.argv[1:3] == ["hook", "sensors"]:
    from ways_sensors.hook import main

    main(sys.argv[3:])
from ways_sensors.cli import main as cli_main  # noqa: E402

sys.exit(cli_main(sys.argv[1:]))
