-- wrk script of bench/service_api.py: each request appends one user turn to one of N sessions
-- with its own Idempotency-Key, as a gateway does.
--   wrk -t2 -c16 -d8s -s bench/service_api.lua http://127.0.0.1:PORT -- SESSIONS TOKEN TAG
-- done() prints one JSON line: requests, seconds, non-2xx answers, socket errors, latency.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  sessions = tonumber(args[1])
  token = args[2]
  tag = args[3]
  sent = 0
  math.randomseed(id * 7919)
end

function request()
  sent = sent + 1
  local path = "/v1/sessions/s" .. math.random(0, sessions - 1) .. "/messages"
  local body = '{"messages":[{"role":"user","content":"turn ' .. sent ..
    ' of a long conversation: please look at the failing test again and explain it"}]}'
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. token,
    ["Idempotency-Key"] = tag .. "-" .. id .. "-" .. sent,
  }
  return wrk.format("POST", path, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.6f, "non_2xx": %d, "socket_errors": %d, ' ..
    '"p50_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f}\n',
    summary.requests, summary.duration / 1e6, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50) / 1e3, latency:percentile(99) / 1e3, latency.max / 1e3))
end
