"""`ways mcp`: the session store served to the agent itself over MCP's stdio transport
(services/mcp_stdio.py), with the tools of services/mcp_tools.py. An agent runs it as
an MCP server: `claude mcp add ways -- ways mcp`, or in its MCP settings
(docs/sessions.md). It writes only JSON-RPC on stdout; it exits 0 when stdin closes.
"""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from .. import __version__
    from ..services import mcp_stdio, mcp_tools

    server = mcp_stdio.Server(
        "ways", __version__, mcp_tools.tools(args.store), mcp_tools.INSTRUCTIONS
    )
    return mcp_stdio.run(server)
