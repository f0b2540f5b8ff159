"""A tiny MCP server for the tests, written with the PyPI `mcp` package
(its high-level server over stdio: MCPServer in mcp 2, FastMCP in mcp 1):
an `add` tool and a `fail` tool that raises."""
import sys

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server

server = Server("weir-test")


@server.tool()
def add(a: float, b: float) -> str:
    """Adds two numbers."""
    total = a + b
    return str(int(total)) if total == int(total) else str(total)


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ValueError(reason)


if __name__ == "__main__":
    print("weir-test MCP server starting", file=sys.stderr, flush=True)
    server.run()
