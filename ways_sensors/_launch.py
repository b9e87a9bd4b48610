"""The launcher `ways reconcile` wires into an agent: `<python> -S <this file> hook sensors`.

pip's console script imports `re` before our code runs and `python -m` costs as much
(runpy), so the hook command runs this file directly, with -S (no site processing). Only
the stdlib is reachable then; we put the folder that holds the package first on
sys.path. Python compiles a script each time it runs it (bench/RESULTS.md, Hook
latency), so the logic is in hook.launched, loaded from cached bytecode; other commands
(the dispatcher's start, for one) pass through it too. Stdlib-only, import-free.
"""

import sys

sys.path[0] = __file__.rpartition("/")[0].rpartition("/")[0] or "/"  # the package's parent
from ways_sensors.hook import launched  # noqa: E402 (after sys.path is set)

launched(sys.argv[1:])  # the hook leaves from in here; any other command comes back
from ways_sensors.cli import main  # noqa: E402 (only when the hook did not leave)

sys.exit(main(sys.argv[1:]))
