-- wrk script for scripts/bench/wrk.ts: requests rotating over a list of paths (one per line in $WRK_PATHS), each from
-- another X-Forwarded-For address (rotating over $WRK_IPS addresses, 0 = no header). $WRK_METHOD is GET (default) or
-- POST. A line may be "path<TAB>value": for GET the value of header $WRK_HEADER_NAME, for POST the request body.
-- $WRK_HEADERS adds fixed headers ("Name: value" lines). Requests are formatted once per thread in init(), so the Lua
-- side does no string work per request. done() prints one machine-readable line.
local reqs = {}
local n = 0
local i = 0

init = function(args)
  local file = os.getenv("WRK_PATHS")
  local ips = tonumber(os.getenv("WRK_IPS") or "0")
  local header = os.getenv("WRK_HEADER_NAME")
  local method = os.getenv("WRK_METHOD") or "GET"
  local fixed = {}
  for name, value in (os.getenv("WRK_HEADERS") or ""):gmatch("([^:\n]+):%s*([^\n]*)") do fixed[name] = value end
  local limit = tonumber(os.getenv("WRK_MAX_REQUESTS") or "50000")
  local k = 0
  for line in io.lines(file) do
    if k >= limit then break end
    local path, value = line:match("^([^\t]+)\t?(.*)$")
    local headers = {}
    for name, value in pairs(fixed) do headers[name] = value end
    if ips > 0 then
      local a = k % ips
      headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.floor(a / 65536) % 256, math.floor(a / 256) % 256, a % 256)
    end
    local body = nil
    if method == "GET" then
      if header and value and value ~= "" then headers[header] = value end
    else
      body = value
    end
    k = k + 1
    reqs[k] = wrk.format(method, path, headers, body)
  end
  n = k
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  i = math.random(n) - 1
end

-- $WRK_DELAY_MS: each connection waits that long after a response before its next request, so the offered rate is
-- about connections × 1000 / (delay + latency) per second instead of as fast as the server answers.
local pause = tonumber(os.getenv("WRK_DELAY_MS") or "0")
if pause > 0 then
  delay = function()
    return pause
  end
end

request = function()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end

done = function(summary, latency, requests)
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"non2xx3xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
