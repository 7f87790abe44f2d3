-- wrk script for scripts/bench/forms.ts: POSTs a JSON form submission to $WRK_PATH, each request from another
-- X-Forwarded-For address (rotating over $WRK_IPS addresses) with a varying body. Requests are formatted once per
-- thread in init(). done() prints one machine-readable line.
local reqs = {}
local n = 0
local i = 0

init = function(args)
  local path = os.getenv("WRK_PATH")
  local ips = tonumber(os.getenv("WRK_IPS") or "8192")
  for k = 0, ips - 1 do
    local headers = {}
    headers["Content-Type"] = "application/json"
    headers["User-Agent"] = "wrk-bench"
    headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.floor(k / 65536) % 256, math.floor(k / 256) % 256, k % 256)
    local body = string.format('{"_hp":"","data":{"name":"Bench %d","email":"bench%d@example.com","message":"Hello from request %d, a message of ordinary length.","consent":true}}', k, k, k)
    reqs[k + 1] = wrk.format("POST", path, headers, body)
  end
  n = ips
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
