-- wrk script for bench/mcp's HTTP part: tools/call "echo" POSTs to one MCP
-- session (its id in MCP_SESSION), each with its own JSON-RPC id (a server
-- refuses a second request with an id still running).
local session = os.getenv("MCP_SESSION")
local counter = 0

request = function()
  counter = counter + 1
  local body = '{"jsonrpc":"2.0","id":' .. counter ..
      ',"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
  return wrk.format("POST", "/mcp", {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session,
    ["MCP-Protocol-Version"] = "2025-11-25",
  }, body)
end
