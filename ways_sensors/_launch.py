"""The launcher `ways reconcile` wires into an agent: `<python> -S <this file> hook sensors`.

pip's console script imports `re` before our code runs (about 5 ms here) and
`python -m` costs as much (runpy), so the hook command runs this file directly, with
-S (no site processing). Only the stdlib is reachable then; we put the folder that
holds the package first on sys.path, and the slow paths (index rebuild, dispatcher,
other commands) run `site.main()` themselves. Stdlib-only, import-free.
"""

import sys


def _main() -> None:
    here = __file__.rpartition("/")[0]
    sys.path[0] = here.rpartition("/")[0] or "/"  # the package's parent, not the package
    argv = sys.argv[1:]
    if argv[:2] == ["hook", "sensors"]:  # `--agent NAME` and the like: the hook's own
        from ways_sensors.hook import main

        main(argv[2:])  # never returns: leaves through _exit(0)
    if sys.flags.no_site:
        import site

        site.main()
    from ways_sensors.cli import main as cli_main

    sys.exit(cli_main(argv))


_main()
