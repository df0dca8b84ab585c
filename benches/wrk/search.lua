-- wrk script: stateless MCP (2026-07-28) POSTs of `tools/call` `search_skills`, one query per
-- request, cycling through a file of queries (one a line; benches/http_wrk.sh writes the `short`
-- and `task` strings of ../shared/eval/dev_queries.json). Every thread starts at a different
-- place in the list. A response is an error unless its status is 200 and its body is a JSON-RPC
-- result without `isError` (counted by the `response` hook, printed by `done`).
--
--   wrk -t2 -c64 -d10s --latency -s benches/wrk/search.lua http://127.0.0.1:PORT/mcp -- QUERIES
--
-- The last line printed is machine-readable:
--   wrk-summary requests=N duration_s=S rps=R p50_ms=A p90_ms=B p99_ms=C errors=E non200=F

local threads = {}

function setup(thread)
  thread:set("number", #threads)
  table.insert(threads, thread)
end

local function json_string(s)
  s = s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == '\\' then return '\\\\' end
    if c == '\n' then return '\\n' end
    if c == '\t' then return '\\t' end
    if c == '\r' then return '\\r' end
    return string.format('\\u%04x', c:byte())
  end)
  return '"' .. s .. '"'
end

function init(args)
  local path = args[1] or error("usage: wrk ... -s search.lua URL -- QUERIES_FILE")
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = "2026-07-28",
    ["Mcp-Method"] = "tools/call",
    ["Mcp-Name"] = "search_skills",
  }
  requests = {}
  for line in io.lines(path) do
    if line ~= "" then
      local id = #requests + 1
      local body = '{"jsonrpc":"2.0","id":' .. id
        .. ',"method":"tools/call","params":{"name":"search_skills","arguments":{"query":'
        .. json_string(line) .. ',"limit":10},"_meta":{'
        .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        .. '"io.modelcontextprotocol/clientCapabilities":{}}}}'
      -- wrk.format builds the whole request once; request() only hands it out.
      table.insert(requests, wrk.format("POST", nil, headers, body))
    end
  end
  if #requests == 0 then error("no query in " .. path) end
  -- number is set by setup(); threads start spread over the list.
  next_request = (number or 0) * 7919 % #requests
  errors = 0
  non200 = 0
end

function request()
  next_request = next_request % #requests + 1
  return requests[next_request]
end

function response(status, headers, body)
  if status ~= 200 then
    non200 = non200 + 1
    errors = errors + 1
  elseif not body:find('"result":', 1, true)
      or body:find('"isError":true', 1, true) then
    errors = errors + 1
  end
end

function done(summary, latency, _)
  local errs, bad_status = 0, 0
  for _, t in ipairs(threads) do
    errs = errs + (t:get("errors") or 0)
    bad_status = bad_status + (t:get("non200") or 0)
  end
  -- Socket errors (connect, read, write, timeout) are errors too.
  local e = summary.errors
  errs = errs + e.connect + e.read + e.write + e.timeout
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "wrk-summary requests=%d duration_s=%.2f rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f errors=%d non200=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, errs, bad_status))
end
