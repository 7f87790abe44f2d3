-- wrk script for scripts/bench/beacon.ts: POST beacons. $WRK_PATHS holds one "path<TAB>JSON body" per line; each
-- request comes from another X-Forwarded-For address (rotating over $WRK_IPS addresses). Requests are formatted once
-- per thread in init(); done() prints the same machine-readable line as wrk.lua.
local reqs = {}
local n = 0
local i = 0

init = function(args)
  local file = os.getenv("WRK_PATHS")
  local ips = tonumber(os.getenv("WRK_IPS") or "0")
  local limit = tonumber(os.getenv("WRK_MAX_REQUESTS") or "50000")
  local k = 0
  for line in io.lines(file) do
    if k >= limit then break end
    local path, body = line:match("^([^\t]+)\t(.*)$")
    local headers = {}
    headers["Content-Type"] = "text/plain;charset=UTF-8"
    headers["User-Agent"] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
    headers["Origin"] = "https://site.example"
    if ips > 0 then
      local a = k % ips
      headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.floor(a / 65536) % 256, math.floor(a / 256) % 256, a % 256)
    end
    k = k + 1
    reqs[k] = wrk.format("POST", path, headers, body)
  end
  n = k
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  i = math.random(n) - 1
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
