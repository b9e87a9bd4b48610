"""`ways sensors tui`: the sensors tab (ways_sensors/tui), when the `tui` extra is there.

Without Textual it says in one line how to install it and exits 2; nothing else in the
package imports Textual, so every other command and the hook run without it.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError


def run(args: argparse.Namespace) -> int:
    try:
        import textual  # noqa: F401 (is the tui extra installed?)
    except ImportError:
        raise UsageError(
            "`ways sensors tui` needs Textual, which the tui extra installs",
            hint="pip install 'ways-sensors[tui]'",
        ) from None
    from ..tui.app import SensorsApp
    from ..tui.style import guard_terminal

    guard_terminal()
    app = SensorsApp()
    app.run()
    return app.return_code or 0
