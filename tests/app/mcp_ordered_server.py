"""An MCP server for the key-order tests, written with the PyPI `mcp` package
(2 or later: its MCPServer): one tool, `place`, whose parameters are declared
zeta, alpha, mid, so its inputSchema lists them in that order, not
alphabetically. It answers with the names of the arguments in the order the
call's JSON wrote them, read from the request's own params, which keep it.
With `--http PORT` it serves streamable HTTP at http://127.0.0.1:PORT/mcp."""
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("weir-order-test")


@server.tool()
def place(zeta: str, alpha: str, mid: str, ctx: Context) -> str:
    """Says the order in which its arguments came."""
    return ",".join(ctx.request_context.params["arguments"])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
