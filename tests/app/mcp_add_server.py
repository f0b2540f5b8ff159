"""A tiny MCP server for the tests, written with the PyPI `mcp` package
(its high-level server over stdio: MCPServer in mcp 2, FastMCP in mcp 1):
an `add` tool and a `fail` tool that raises. With `--http PORT` it serves
streamable HTTP at http://127.0.0.1:PORT/mcp instead."""
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
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        port = int(sys.argv[2])
        try:
            server.run(transport="streamable-http", host="127.0.0.1", port=port)
        except TypeError:  # mcp 1: host and port are settings
            server.settings.host, server.settings.port = "127.0.0.1", port
            server.run(transport="streamable-http")
    else:
        server.run()
